# Cross build for 64-bit Arm Linux (the GB10's CPU) on an x86-64 Debian or Ubuntu machine, with
# Debian's cross compiler (crossbuild-essential-arm64) and the libraries' multiarch `-dev:arm64`
# packages. What the build runs (the manual generator, test discovery, the tests) goes through
# qemu-user (package qemu-user), which CMake prepends as the emulator. scripts/test.sh --arm64
# installs all of that and uses this file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The arm64 libraries live in /usr/lib/aarch64-linux-gnu beside the host's: look only there (and
# in the arch-independent headers and CMake packages), never at the host's x86-64 ones.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/cmake
    /usr/lib/x86_64-linux-gnu/pkgconfig)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# An absolute path: the tests start it as a child process, which takes no PATH search.
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64)
if(NOT EXISTS ${CMAKE_CROSSCOMPILING_EMULATOR})
  message(FATAL_ERROR "${CMAKE_CROSSCOMPILING_EMULATOR} is missing: install qemu-user "
                      "(scripts/test.sh --arm64 installs what this build needs)")
endif()
