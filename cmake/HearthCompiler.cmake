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
