/* One-off probe (issue 37, deliver 2): N "codec threads" each decoding and encoding 1080p half
 * ZIP frames for S seconds, frames split across threads (par_each's choice) or whole (threads 1):
 * frames/s and process CPU time a frame, to see what splitting costs when the cores are busy.
 * Built against the branch's objects:
 *   cc -O2 -I. -o /tmp/exr-load THIS_FILE build/codec/\*.o build/core/\*.o -lturbojpeg -ljpeg \
 *      -lspng -lOpenEXRCore-3_1 -ldeflate -lwebp -lavif -lgnutls -ljansson -lmicrohttpd -lz -lm -lpthread
 *   /tmp/exr-load FRAME.jpg N SECONDS */
/* N "codec threads" decoding + encoding 1080p half ZIP frames for S seconds, each frame split
 * (threads 0: par_each's choice) or not (threads 1): frames/s and process CPU time */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "codec/image.h"
static unsigned char *e; static size_t el; static int split; static double until; 
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *run(void *a){ long *n=a; char err[256]; while(now()<until){ struct image x; struct image_info in; struct image_limits l={.threads=split?0:1};
  if(image_decode(e,el,&l,&x,&in,err)) exit(1); struct image_encode_opts o={.bits=16,.threads=split?0:1}; unsigned char*q; size_t ql; unsigned lost;
  if(image_encode(&x,IMAGE_FORMAT_EXR,&o,&q,&ql,&lost,err)) exit(1); free(q); image_free(&x); (*n)++; } return NULL; }
int main(int argc,char**argv){ FILE*f=fopen(argv[1],"rb");fseek(f,0,2);long n=ftell(f);rewind(f);unsigned char*b=malloc(n);fread(b,1,n,f);fclose(f);
 struct image img; struct image_info in; char err[256]; image_decode(b,n,NULL,&img,&in,err); struct image_encode_opts o={.bits=16}; unsigned lost; image_encode(&img,IMAGE_FORMAT_EXR,&o,&e,&el,&lost,err);
 int nt=atoi(argv[2]); double secs=atof(argv[3]);
 for(split=0;split<2;split++){ pthread_t t[16]; long cnt[16]={0}; struct timespec c0,c1; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&c0); double t0=now(); until=t0+secs;
  for(int i=0;i<nt;i++) pthread_create(&t[i],NULL,run,&cnt[i]); long tot=0; for(int i=0;i<nt;i++){pthread_join(t[i],NULL); tot+=cnt[i];}
  double w=now()-t0; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&c1); double cpu=(c1.tv_sec-c0.tv_sec)+(c1.tv_nsec-c0.tv_nsec)*1e-9;
  printf("%d codec threads, frames %s: %.2f frames/s, %.0f core-ms a frame\n", nt, split?"split":"whole", tot/w, cpu*1e3/tot); }
 return 0; }
