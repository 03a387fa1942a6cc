/* saxpy in C with OpenMP, the compiler's best for this machine: the memory-bandwidth reference of
   bench/saxpy.py. Usage: stream_saxpy N REPEAT -> best GB/s (12 bytes per element). */
#include <stdio.h>
#include <stdlib.h>

#include "stream_timer.h"

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int repeat = argc > 2 ? atoi(argv[2]) : 20;
    float *x = aligned_alloc(64, ((n * 4 + 63) / 64) * 64), *y = aligned_alloc(64, ((n * 4 + 63) / 64) * 64);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 1.0f; }  /* first touch by the thread that uses it */
    double best = 1e30;
    for (int r = 0; r < repeat; r++) {
        double t = now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) y[i] = 2.0f * x[i] + y[i];
        t = now() - t;
        if (t < best) best = t;
    }
    printf("%.3f\n", 12.0 * n / best / 1e9);
    return y[n / 2] < 0.0f;
}
