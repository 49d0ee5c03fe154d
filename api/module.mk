# api/: what a request says, in text, to the engine's numbers: the request table and its parser,
# the operation table and the error table, kernel presets, answer formats and Accept, the OpenAPI document. Above gles/ (whose vocabulary
# it spells), codec/ and core/, below cli/ and daemon/; jansson lives here, GL and HTTP do not
# (tests/build/test_layers.sh keeps it so).
API_OBJS := \
	$(BUILD)/api/request.o \
	$(BUILD)/api/kernel_preset.o \
	$(BUILD)/api/format.o \
	$(BUILD)/api/openapi.o \
	$(BUILD)/api/errors.o \
	$(BUILD)/api/engine_errors.o \
	$(BUILD)/api/operation.o
