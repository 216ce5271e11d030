// DEV TOOL: a planted out-of-bounds write, to show that compute-sanitizer (memcheck) on the
// device machine really reports errors (expect "Invalid __global__ write" and a non-zero rc).
#include <cuda_runtime.h>

#include <cstdio>

__global__ void write_one_past(int* p, int n) {
  p[n] = 1;
}

int main() {
  int* p = nullptr;
  if (cudaMalloc(&p, 256 * sizeof(int)) != cudaSuccess)
    return 2;
  write_one_past<<<1, 1>>>(p, 256 + 64);
  const cudaError_t err = cudaDeviceSynchronize();
  std::printf("oob_check: %s\n", cudaGetErrorString(err));
  cudaFree(p);
  return 0;
}
