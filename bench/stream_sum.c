/* The sum of N floats in C with OpenMP, in any order (each thread's part in SIMD partial sums): the
   memory-bandwidth reference of bench/tile_reduce.py, the most a reduction that reads its input once can
   reach here. Usage: stream_sum N REPEAT -> best GB/s (4 bytes per element). */
#include <stdio.h>
#include <stdlib.h>

#include "stream_timer.h"

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int repeat = argc > 2 ? atoi(argv[2]) : 20;
    float *x = aligned_alloc(64, ((n * 4 + 63) / 64) * 64);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) x[i] = (float)(i & 1023) * (1.0f / 1024.0f);  /* first touch by its reader */
    double best = 1e30, keep = 0.0;
    for (int r = 0; r < repeat; r++) {
        double t = now();
        float s = 0.0f;
#pragma omp parallel for simd schedule(static) reduction(+ : s)
        for (long i = 0; i < n; i++) s += x[i];
        t = now() - t;
        keep += s;  /* the sum is used: the loop is not dropped */
        if (t < best) best = t;
    }
    printf("%.3f\n", 4.0 * n / best / 1e9);
    return keep < 0.0;
}
