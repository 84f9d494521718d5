# The hip flavour's device libraries: which targets are linked into binaries, and with which libraries.
# ROCm's device libraries are target-independent bitcode (ocml, ockl, ...) plus one oclc_isa_version_<isa>.bc
# per target, which holds a single constant: the target's ISA version. Where the installed libraries
# predate a target (Debian 12's ROCm 5.2 has no gfx11 file), that file is generated here, beside links to
# the installed ones, so that the target is linked like the others. Where it cannot be generated, the
# target is compiled to assembly only (the ISA audit, with -nogpulib).
# Sets DCUKERN_HIP_BINARY_ARCHS and DCUKERN_HIP_DEVICE_LIB_FLAGS (empty where the installed libraries do).
find_path(DCUKERN_HIP_DEVICE_LIB_DIR oclc_isa_version_906.bc
  PATHS /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /opt/rocm/amdgcn/bitcode /opt/rocm/lib/amdgcn/bitcode
        /opt/dtk/amdgcn/bitcode)
# The LLVM behind hipcc (clang 15 on Debian 12): its clang makes the generated library, its llvm-mc re-assembles
# the ISA audit's assembly (tools/).
string(REGEX MATCH "^[0-9]+" DCUKERN_HIP_LLVM_MAJOR "${CMAKE_CXX_COMPILER_VERSION}")
find_program(DCUKERN_HIP_CLANG NAMES clang-${DCUKERN_HIP_LLVM_MAJOR} clang
  HINTS /usr/lib/llvm-${DCUKERN_HIP_LLVM_MAJOR}/bin /opt/rocm/llvm/bin)
find_program(DCUKERN_HIP_LLVM_MC NAMES llvm-mc-${DCUKERN_HIP_LLVM_MAJOR} llvm-mc
  HINTS /usr/lib/llvm-${DCUKERN_HIP_LLVM_MAJOR}/bin /opt/rocm/llvm/bin)

# gfxABC -> the ISA version constant: major ABC minus its last two digits, then minor and stepping (hex).
function(dcukern_isa_version arch out)
  string(REGEX MATCH "^gfx([0-9]+)([0-9a-f])([0-9a-f])$" ok ${arch})
  if(NOT ok)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  math(EXPR v "${CMAKE_MATCH_1} * 1000 + 0x${CMAKE_MATCH_2} * 100 + 0x${CMAKE_MATCH_3}")
  set(${out} ${v} PARENT_SCOPE)
endfunction()

# Writes dir/oclc_isa_version_<isa>.bc for arch (isa: its name without "gfx"), beside links to the installed
# libraries (made once); ok: TRUE where it was made.
function(dcukern_make_isa_version_lib arch isa dir ok)
  set(${ok} FALSE PARENT_SCOPE)
  dcukern_isa_version(${arch} version)
  if(NOT version OR NOT DCUKERN_HIP_CLANG)
    return()
  endif()
  if(NOT EXISTS ${dir})
    file(GLOB installed ${DCUKERN_HIP_DEVICE_LIB_DIR}/*.bc)
    file(MAKE_DIRECTORY ${dir})
    foreach(lib IN LISTS installed)
      get_filename_component(name ${lib} NAME)
      file(CREATE_LINK ${lib} ${dir}/${name} SYMBOLIC)
    endforeach()
  endif()
  file(WRITE ${dir}/oclc_isa_version_${isa}.ll
    "target triple = \"amdgcn-amd-amdhsa\"\n"
    "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 ${version}, align 4\n")
  execute_process(COMMAND ${DCUKERN_HIP_CLANG} -c -emit-llvm --target=amdgcn-amd-amdhsa -nogpulib -x ir
                          ${dir}/oclc_isa_version_${isa}.ll -o ${dir}/oclc_isa_version_${isa}.bc
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(${ok} TRUE PARENT_SCOPE)
    message(STATUS "dcukern: ${arch} links the installed device libraries with a generated ISA version file "
                   "(oclc_isa_version_${isa}.bc: ${version})")
  endif()
endfunction()

set(DCUKERN_HIP_BINARY_ARCHS)
set(DCUKERN_HIP_DEVICE_LIB_FLAGS)
set(generated_libs ${CMAKE_BINARY_DIR}/device-libs)
foreach(arch IN LISTS DCUKERN_HIP_ARCHS)
  string(REGEX REPLACE "^gfx" "" isa ${arch})
  if(NOT DCUKERN_HIP_DEVICE_LIB_DIR OR EXISTS ${DCUKERN_HIP_DEVICE_LIB_DIR}/oclc_isa_version_${isa}.bc)
    list(APPEND DCUKERN_HIP_BINARY_ARCHS ${arch})
    continue()
  endif()
  dcukern_make_isa_version_lib(${arch} ${isa} ${generated_libs} made)
  if(made)
    list(APPEND DCUKERN_HIP_BINARY_ARCHS ${arch})
    set(DCUKERN_HIP_DEVICE_LIB_FLAGS --rocm-device-lib-path=${generated_libs})
  else()
    message(STATUS "dcukern: no device library for ${arch}: compiled to assembly (ISA audit) only")
  endif()
endforeach()
