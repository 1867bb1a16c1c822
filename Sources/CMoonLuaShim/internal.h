#ifndef CMOONLUASHIM_INTERNAL_H
#define CMOONLUASHIM_INTERNAL_H
// Shared between the shim's C files; not part of the module's interface.
#include "cmoonluashim.h"

// The stack level of the nearest Lua function that is script code (not a bundled
// "=[moonreel ...]" chunk), for positioning errors at the user's line; 0 if none.
int moon_script_level(lua_State *L);
// Raises the message on top of the stack, prefixed with the position of moon_script_level
// (if there is one).
int moon_raise_from_script(lua_State *L);

#endif
