# SPDX-License-Identifier: Apache-2.0
# cmake/embed.cmake - a file's bytes as the body of a C array, for the
# generators that compile files into the binary (webpage.cmake: web/;
# datafiles.cmake: data/). Included in -P mode, at build time.
#
# embed_bytes(PATH BYTES_VAR LEN_VAR): BYTES_VAR gets "0x..,0x..," sixteen to a
# line, LEN_VAR the file's length in bytes. The caller closes the array (with a
# NUL, so that the text can be read as a string).
function(embed_bytes path bytes_var len_var)
  file(READ "${path}" hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR n "${n} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
  set(${bytes_var} "${bytes}" PARENT_SCOPE)
  set(${len_var} ${n} PARENT_SCOPE)
endfunction()
