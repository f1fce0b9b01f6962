# Compiler flags shared by every target we own: warnings as errors, optional sanitizers.
function(tilescope_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>)
  # GCC 12 at -O3 reports -Wrestrict inside libstdc++'s string concatenation where there is no
  # overlap (GCC bugs 105329, 105651; fixed in 13): the Release (headless) build stops on it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  # The fuzz build uses clang-14, whose extra warnings (e.g. -Wunneeded-internal-declaration) must
  # not stop a fuzzing run; they are still printed, and the gcc builds keep -Werror.
  if(TILESCOPE_FUZZ)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-error>)
  endif()
  # The sanitized build (the asan preset) compiles at -O1, so the simulator's and the kernels'
  # loops run the curriculum in minutes, not the better part of an hour; the app, the CLI and the
  # tests — glue around those loops, and most of the compile time — go back to -O0.
  if(TILESCOPE_SANITIZE AND NOT target IN_LIST TILESCOPE_SANITIZE_OPTIMISED)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
  endif()
endfunction()
set(TILESCOPE_SANITIZE_OPTIMISED tilescope_sim tilescope_kernels tilescope_bench)

if(TILESCOPE_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()

# libFuzzer builds (the `fuzz` preset, clang): every library is instrumented for coverage and
# checked by ASan/UBSan, so the fuzzer sees inside tilescope_sim; harnesses add -fsanitize=fuzzer.
if(TILESCOPE_FUZZ)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()
