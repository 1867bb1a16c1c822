#ifndef CMOONLUASHIM_INTERNAL_H
#define CMOONLUASHIM_INTERNAL_H
// Shared between the shim's C files; not part of the module's interface.
#include "cmoonluashim.h"

// Raises the message on top of the stack, prefixed with the position of moon_script_level
// (if there is one).
int moon_raise_from_script(lua_State *L);

// Makes strings answer `kind`, `subject` and `message` for the errors raised with
// MOON_RAISE_KINDED; call before the string metatable is protected.
void moon_install_error_fields(lua_State *L);

#endif
