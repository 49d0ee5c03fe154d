/* One-off probe (issue 37, deliver 2): zlib against libdeflate on the ZIP blocks of a frame, for
 * the level EXR answers are deflated at. The frame (a JPEG, decoded by codec/image) is packed as
 * OpenEXR packs a ZIP block of half or float RGB (16 lines, channels B, G, R a line), put through
 * its predictor, then each block deflated and inflated; process CPU time, best of 3 (the VM is
 * shared). Built against the branch's objects:
 *   cc -O2 -I. -o /tmp/zcmp THIS_FILE build/codec/\*.o build/core/\*.o -lturbojpeg -ljpeg -lspng \
 *      -lOpenEXRCore-3_1 -ldeflate -lwebp -lavif -lgnutls -ljansson -lmicrohttpd -lz -lm -lpthread
 *   /tmp/zcmp FRAME.jpg 16|32 */
/* zlib vs libdeflate on EXR ZIP chunks (predicted bytes) of a real frame */
#include <libdeflate.h>
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include "codec/image.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static uint16_t f2h(float f){ /* crude RNE via _Float16 */ _Float16 h=(_Float16)f; uint16_t u; memcpy(&u,&h,2); return u;}
static void predict(uint8_t *t,const uint8_t *raw,size_t n){uint8_t *t1=t,*t2=t+(n+1)/2;size_t i=0;for(;i+1<n;i+=2){*t1++=raw[i];*t2++=raw[i+1];}if(i<n)*t1=raw[i];uint8_t p=t[0];for(i=1;i<n;i++){uint8_t c=t[i];t[i]=(uint8_t)(c-p+128);p=c;}}
#include <OpenEXR/openexr.h>
int main(int argc,char**argv){ {int l; exr_get_default_zip_compression_level(&l); printf("OpenEXRCore default zip level %d\n", l);}
  FILE*f=fopen(argv[1],"rb");fseek(f,0,2);long n=ftell(f);rewind(f);unsigned char*b=malloc(n);fread(b,1,n,f);fclose(f);
  int bits=atoi(argv[2]);
  struct image img;struct image_info info;char err[256];
  if(image_decode(b,n,NULL,&img,&info,err)){puts(err);return 1;}
  int w=img.width,h=img.height,ch=img.channels, bpe=bits/8;
  int lpc=16, nck=(h+lpc-1)/lpc;
  size_t csz=(size_t)w*lpc*ch*bpe;
  uint8_t **chunks=malloc(nck*sizeof*chunks); size_t *cn=malloc(nck*sizeof*cn);
  for(int c=0;c<nck;c++){ uint8_t *raw=malloc(csz), *p=raw; int y0=c*lpc,y1=y0+lpc>h?h:y0+lpc;
    for(int y=y0;y<y1;y++) for(int k=ch-1;k>=0;k--) for(int x=0;x<w;x++){ float v=img.pixels[((size_t)y*w+x)*ch+k];
      if(bits==16){uint16_t u=f2h(v);memcpy(p,&u,2);p+=2;} else {memcpy(p,&v,4);p+=4;} }
    cn[c]=p-raw; chunks[c]=malloc(cn[c]); predict(chunks[c],raw,cn[c]); free(raw);}
  size_t tot=0; for(int c=0;c<nck;c++) tot+=cn[c];
  uint8_t *out=malloc(csz*2), *back=malloc(csz*2);
  for(int lvl=4;lvl<=4;lvl++){ double best=1e9; size_t z=0; for(int r=0;r<3;r++){ z=0; double a=now(); for(int c=0;c<nck;c++){uLongf o=csz*2; compress2(out,&o,chunks[c],cn[c],lvl); z+=o;} if(now()-a<best)best=now()-a;} double t0=0,t1=best;
    double td=0; /* decompress time */ 
    { double a=now(); for(int c=0;c<nck;c++){uLongf o=csz*2; compress2(out,&o,chunks[c],cn[c],lvl); double s=now(); uLongf bn=csz*2; uncompress(back,&bn,out,o); td+=now()-s;} (void)a; }
    printf("%dbit zlib     level %d: %7.1f ms deflate, %6.1f ms inflate, %5.1f%% (%zu of %zu)\n",bits,lvl,(t1-t0)*1e3,td*1e3,100.0*z/tot,z,tot);}
  for(int lvl=1;lvl<=3;lvl++){ struct libdeflate_compressor*cc=libdeflate_alloc_compressor(lvl); struct libdeflate_decompressor*dd=libdeflate_alloc_decompressor();
    double best=1e9; size_t z=0; for(int r=0;r<3;r++){ z=0; double a=now(); for(int c=0;c<nck;c++){ z+=libdeflate_zlib_compress(cc,chunks[c],cn[c],out,csz*2);} if(now()-a<best)best=now()-a;} double t0=0,t1=best; double td=0;
    for(int c=0;c<nck;c++){size_t o=libdeflate_zlib_compress(cc,chunks[c],cn[c],out,csz*2); double s=now(); libdeflate_zlib_decompress(dd,out,o,back,cn[c],NULL); td+=now()-s;}
    printf("%dbit libdeflate level %d: %7.1f ms deflate, %6.1f ms inflate, %5.1f%%\n",bits,lvl,(t1-t0)*1e3,td*1e3,100.0*z/tot);
    libdeflate_free_compressor(cc);libdeflate_free_decompressor(dd);}
  return 0;}
