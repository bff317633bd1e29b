# Compiler set-up shared by every target: ccache, warnings, sanitizers.
find_program(HEARTH_CCACHE ccache)
if(HEARTH_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${HEARTH_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${HEARTH_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${HEARTH_CCACHE})
endif()

if(HEARTH_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(HEARTH_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT HEARTH_SANITIZER STREQUAL "")
  message(FATAL_ERROR "HEARTH_SANITIZER must be '', 'address' or 'thread', not '${HEARTH_SANITIZER}'")
endif()

# Warnings for our own targets (third-party headers come in as SYSTEM).
function(hearth_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:/W4 /permissive->)
  else()
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
        -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough>)
  endif()
endfunction()

# Executables keep their debug information compressed (zstd). The test programs link the
# engine and the app statically, about 100 MB each uncompressed and most of a build tree's
# 7 GB; compressed, 40 % of that, for a tenth of a second more per link (measured on
# tst_ui: 117 -> 45 MB, 1.7 -> 1.9 s). gdb (Qt Test's crash backtraces) and strip read it.
# Not for the sanitizer and fuzzing builds, whose symbolizers may predate zstd sections.
if(NOT WIN32 AND NOT APPLE AND HEARTH_SANITIZER STREQUAL "" AND NOT HEARTH_FUZZ)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-Wl,--compress-debug-sections=zstd" HEARTH_LINKER_ZSTD)
  if(HEARTH_LINKER_ZSTD)
    add_link_options($<$<LINK_LANGUAGE:C,CXX>:-Wl,--compress-debug-sections=zstd>)
  endif()
endif()
