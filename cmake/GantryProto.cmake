# gantry_proto_library(NAME PROTOS a.proto [GRPC])
# Generates C++ (and, with GRPC, gRPC service stubs) from .proto files under proto/
# into the build tree and wraps them in a static library. Generated headers are
# included as "gantry/<path>.pb.h" relative to proto/.
include_guard(GLOBAL)

function(gantry_proto_library name)
  cmake_parse_arguments(ARG "GRPC" "" "PROTOS" ${ARGN})
  set(out_dir "${PROJECT_BINARY_DIR}/proto_gen")
  file(MAKE_DIRECTORY "${out_dir}")
  set(srcs)
  foreach(proto ${ARG_PROTOS})
    get_filename_component(abs "${proto}" ABSOLUTE)
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}/proto" "${abs}")
    string(REGEX REPLACE "\\.proto$" "" stem "${rel}")
    set(gen "${out_dir}/${stem}.pb.cc" "${out_dir}/${stem}.pb.h")
    set(cmd_args --proto_path=${PROJECT_SOURCE_DIR}/proto --cpp_out=${out_dir})
    if(ARG_GRPC)
      list(APPEND gen "${out_dir}/${stem}.grpc.pb.cc" "${out_dir}/${stem}.grpc.pb.h")
      list(APPEND cmd_args --grpc_out=${out_dir} --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN})
    endif()
    add_custom_command(
      OUTPUT ${gen}
      COMMAND protobuf::protoc ${cmd_args} "${abs}"
      DEPENDS "${abs}" protobuf::protoc
      COMMENT "protoc ${rel}"
      VERBATIM)
    list(APPEND srcs ${gen})
  endforeach()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC "${out_dir}")
  # Generated code is not ours to keep warning-free.
  target_compile_options(${name} PRIVATE -Wno-error -w)
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf)
  if(ARG_GRPC)
    target_link_libraries(${name} PUBLIC gRPC::grpc++)
  endif()
endfunction()
