# Which CUDA architectures gb10tune's kernels are built for, and whether the CUDA compiler knows
# them. sm_121 (the GB10's GPU) needs CUDA 12.9 or later; an older nvcc would fail deep inside
# bandwidth.cu, so configure says it first, in one line, with the ways out.

# Sets OUT_VAR to "" when a CUDA compiler of COMPILER_VERSION can build every architecture of
# ARCHITECTURES (a CUDA_ARCHITECTURES list), else to the one-line reason and what to do.
function(gb10tune_check_cuda_architectures COMPILER_VERSION ARCHITECTURES OUT_VAR)
  set(reason "")
  foreach(architecture IN LISTS ARCHITECTURES)
    string(REGEX MATCH "^[0-9]+" number "${architecture}")
    if(number STREQUAL "121" AND COMPILER_VERSION VERSION_LESS 12.9)
      set(reason "CUDA ${COMPILER_VERSION} does not know sm_121, the GB10's GPU (CUDA 12.9 or later "
                 "does): install CUDA 12.9+ and set CUDACXX to its nvcc, or configure with "
                 "-DGB10TUNE_CUDA_ARCHITECTURES=\"90-real;80-virtual\" (no GB10 code: a GB10 then "
                 "compiles the PTX at first use) or with -DGB10TUNE_CUDA=OFF")
      break()
    endif()
  endforeach()
  set(${OUT_VAR} "${reason}" PARENT_SCOPE)
endfunction()
