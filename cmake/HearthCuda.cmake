# HEARTH_CUDA=AUTO builds the CUDA backend whenever nvcc is found, so CI compiles the
# CUDA code on machines without a GPU; ON makes a missing toolkit an error.
# HEARTH_CUDA_PACKAGE_ARCHS=ON builds every architecture a package ships (slow).
set(HEARTH_WITH_CUDA OFF)
if(NOT HEARTH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      if(HEARTH_CUDA_PACKAGE_ARCHS)
        # What packages ship: machine code for every architecture a user is likely to
        # have (Turing to Blackwell: sm_100 is B200/GB200, sm_120 the desktop cards), and
        # PTX of the newest for what comes later. (Without 100-real a B200 had no image at
        # all: 120's PTX cannot JIT for an older architecture; tst_cuda_model checks.)
        # Toolkits before 12.8 know no Blackwell (the Windows workflow's 12.x among them):
        # machine code up to sm_90 and its PTX.
        execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --version OUTPUT_VARIABLE nvcc_out
                        ERROR_QUIET)
        string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _ "${nvcc_out}")
        if(CMAKE_MATCH_1 AND CMAKE_MATCH_1 VERSION_LESS 12.8)
          set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;90-virtual"
              CACHE STRING "CUDA architectures")
        else()
          set(CMAKE_CUDA_ARCHITECTURES
              "75-real;80-real;86-real;89-real;90-real;100-real;120-real;120-virtual"
              CACHE STRING "CUDA architectures")
        endif()
        message(STATUS "CUDA package architectures (nvcc ${CMAKE_MATCH_1}): "
                       "${CMAKE_CUDA_ARCHITECTURES}")
      else()
        # Development and CI (which has no GPU and a time limit): machine code for the GPU
        # the tests run on (H200, sm_90) and PTX for sm_75, which the driver compiles for
        # any other card from Turing on (once; it caches the result).
        set(CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual" CACHE STRING "CUDA architectures")
      endif()
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # Line tables in every build (compute-sanitizer and profilers name source lines; no
    # effect on the code generated).
    string(APPEND CMAKE_CUDA_FLAGS " -lineinfo")
    set(HEARTH_WITH_CUDA ON)
  elseif(HEARTH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HEARTH_CUDA=ON but no CUDA compiler was found (is nvcc on PATH?)")
  endif()
endif()
message(STATUS "Hearth: CUDA backend ${HEARTH_WITH_CUDA}")
