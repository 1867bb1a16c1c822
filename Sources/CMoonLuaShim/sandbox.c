// Library setup for the two trust levels: trusted user scripts (full libraries, text-only
// chunks) and untrusted effect scripts (the C pieces of the sandbox that ScriptHost/Lua/effect_host.lua
// assembles in Lua). Everything here raises errors from C, never from Swift.
#include "internal.h"
#include <string.h>

// MARK: Text-only loading

// Calls upvalue 1 (the original load/loadfile) with argument `mode_arg` forced to "t",
// keeping the argument count (load and loadfile treat an absent env differently from nil).
static int call_with_text_mode(lua_State *L, int mode_arg) {
    if (lua_gettop(L) < mode_arg) lua_settop(L, mode_arg);
    lua_pushliteral(L, "t");
    lua_replace(L, mode_arg);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int text_load(lua_State *L) { return call_with_text_mode(L, 3); }
static int text_loadfile(lua_State *L) { return call_with_text_mode(L, 2); }

static int text_dofile_continue(lua_State *L, int status, lua_KContext context) {
    (void)status;
    (void)context;
    return lua_gettop(L) - 1;
}

static int text_dofile(lua_State *L) {
    const char *filename = luaL_optstring(L, 1, NULL);
    lua_settop(L, 1);
    if (luaL_loadfilex(L, filename, "t") != LUA_OK) return lua_error(L);
    lua_callk(L, 0, LUA_MULTRET, 0, text_dofile_continue);
    return text_dofile_continue(L, LUA_OK, 0);
}

// package.searchers[2] (Lua files on package.path), loading text only.
static int text_lua_searcher(lua_State *L) {
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, LUA_LOADLIBNAME);                       // name loaded package
    lua_getfield(L, -1, "searchpath");                          // ... searchpath
    lua_pushvalue(L, 1);
    if (lua_getfield(L, -3, "path") != LUA_TSTRING) return luaL_error(L, "'package.path' must be a string");
    lua_call(L, 2, 2);                                          // ... filename|nil message
    if (lua_isnil(L, -2)) return 1;                             // the "no file '...'" list
    const char *filename = lua_tostring(L, -2);
    if (luaL_loadfilex(L, filename, "t") != LUA_OK) {
        return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, filename,
                          lua_tostring(L, -1));
    }
    lua_pushstring(L, filename);
    return 2;
}

static void replace_with_text_mode(lua_State *L, const char *name, lua_CFunction wrapper) {
    lua_getglobal(L, name);
    lua_pushcclosure(L, wrapper, 1);
    lua_setglobal(L, name);
}

// MARK: Handlers a stop skips

// A limit stops a script by raising from the count hook, and Lua keeps hooks off where the
// raise happened: in a message handler it then calls, and in the to-be-closed variables of a
// coroutine that died that way. Code there could never be stopped, so once a limit has
// stopped the script, xpcall's handler is skipped and such coroutines are never closed.

static int guarded_handler(lua_State *L) {
    if (moon_stopped(L)) return 1;                              // the error, unchanged
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int finish_xpcall(lua_State *L, int status, lua_KContext extra) {
    if (status != LUA_OK && status != LUA_YIELD) {
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

// xpcall(f, handler, ...) as Lua's, with the handler behind guarded_handler.
static int guarded_xpcall(lua_State *L) {
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);                                          // f handler args...
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);                                        // f handler true f args...
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_xpcall);
    return finish_xpcall(L, status, 2);
}

static const char *const STOPPED_THREADS = "moonreel.stoppedthreads";

static int died_from_error(lua_State *co) {
    int status = lua_status(co);
    return status != LUA_OK && status != LUA_YIELD;
}

// Remembers (weakly) the coroutine at `index`, which a limit stopped.
static void remember_stopped(lua_State *L, int index) {
    index = lua_absindex(L, index);
    if (lua_getfield(L, LUA_REGISTRYINDEX, STOPPED_THREADS) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 1);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, STOPPED_THREADS);
    }
    lua_pushvalue(L, index);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

static int was_stopped(lua_State *L, int index) {
    index = lua_absindex(L, index);
    if (lua_getfield(L, LUA_REGISTRYINDEX, STOPPED_THREADS) != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pushvalue(L, index);
    int stopped = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 2);
    return stopped;
}

// coroutine.resume (upvalue 1), remembering a coroutine that a limit stopped.
static int guarded_resume(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    lua_pushvalue(L, 1);
    lua_insert(L, 1);                                           // co co args...
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 2);                                           // co resume co args...
    lua_call(L, lua_gettop(L) - 2, LUA_MULTRET);               // co ok results...
    if (co && !lua_toboolean(L, 2) && died_from_error(co) && moon_stopped(L)) remember_stopped(L, 1);
    return lua_gettop(L) - 1;
}

// A function made by coroutine.wrap: upvalue 1 the coroutine, 2 coroutine.resume.
static int guarded_wrapped(lua_State *L) {
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_rotate(L, 1, 2);                                        // resume co args...
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);               // ok results... | false error
    if (lua_toboolean(L, 1)) return lua_gettop(L) - 1;
    if (co && died_from_error(co)) {
        if (moon_stopped(L)) {
            remember_stopped(L, lua_upvalueindex(1));
        } else {
#if LUA_VERSION_RELEASE_NUM >= 50406
            int status = lua_closethread(co, L);
#else
            int status = lua_resetthread(co);
#endif
            lua_xmove(co, L, 1);                                // the error after closing
            if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
                luaL_where(L, 1);
                lua_insert(L, -2);
                lua_concat(L, 2);
            }
        }
    }
    return lua_error(L);
}

// coroutine.wrap(f), upvalue 1 coroutine.resume.
static int guarded_wrap(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, guarded_wrapped, 2);
    return 1;
}

// coroutine.close (upvalue 1), refused for a coroutine a limit stopped.
static int guarded_close(lua_State *L) {
    if (lua_type(L, 1) == LUA_TTHREAD && was_stopped(L, 1)) {
        return luaL_error(L, "cannot close a coroutine that a limit stopped");
    }
    moon_charge(L, 0); // raises again if the script is stopped
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

// Replaces xpcall and coroutine.resume/wrap/close in the globals with the guarded ones.
static void install_stop_guards(lua_State *L) {
    lua_pushcfunction(L, guarded_xpcall);
    lua_setglobal(L, "xpcall");
    lua_getglobal(L, LUA_COLIBNAME);
    lua_getfield(L, -1, "resume");                              // co resume
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, guarded_resume, 1);
    lua_setfield(L, -3, "resume");
    lua_pushcclosure(L, guarded_wrap, 1);
    lua_setfield(L, -2, "wrap");
    lua_getfield(L, -1, "close");
    lua_pushcclosure(L, guarded_close, 1);
    lua_setfield(L, -2, "close");
    lua_pop(L, 1);
}

// MARK: User libraries

static void install_budgeted_patterns(lua_State *L) {
    lua_getglobal(L, LUA_STRLIBNAME);
    static const luaL_Reg patterns[] = {
        {"find", moon_str_find}, {"match", moon_str_match},
        {"gmatch", moon_str_gmatch}, {"gsub", moon_str_gsub}, {NULL, NULL}};
    luaL_setfuncs(L, patterns, 0);
    lua_pop(L, 1);
}

// Strings share one metatable in a state; scripts can neither read nor replace it, so no
// effect can change what `("").upper` means for the user script or for other effects.
static void protect_string_metatable(lua_State *L) {
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);
}

int moon_open_user_libraries(lua_State *L) {
    luaL_openlibs(L);
    replace_with_text_mode(L, "load", text_load);
    replace_with_text_mode(L, "loadfile", text_loadfile);
    lua_pushcfunction(L, text_dofile);
    lua_setglobal(L, "dofile");
    lua_getglobal(L, LUA_LOADLIBNAME);
    lua_getfield(L, -1, "searchers");
    lua_pushcfunction(L, text_lua_searcher);
    lua_rawseti(L, -2, 2);
    lua_pop(L, 2);
    install_budgeted_patterns(L);
    moon_install_error_fields(L);
    protect_string_metatable(L);
    install_stop_guards(L);
    return 0;
}

// MARK: Sandbox pieces

// setmetatable that refuses finalizers: a __gc function runs with debug hooks off (Lua
// stops hooks during GC metamethods), so a finalizer that never ends could not be stopped.
// Lua registers a finalizer only if __gc is present when the metatable is set, so checking
// here is enough.
static int sandbox_setmetatable(lua_State *L) {
    int type = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, type == LUA_TNIL || type == LUA_TTABLE, 2, "nil or table");
    if (type == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL) return luaL_error(L, "effects cannot set finalizers (__gc)");
        lua_pop(L, 1);
    }
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL) return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

// getmetatable for tables only: the metatables of strings and of Moonreel objects are
// shared with the user script and with other effects.
static int sandbox_getmetatable(lua_State *L) {
    luaL_checkany(L, 1);
    if (lua_type(L, 1) != LUA_TTABLE || !lua_getmetatable(L, 1)) {
        lua_pushnil(L);
        return 1;
    }
    luaL_getmetafield(L, 1, "__metatable");  // pushes nothing when absent
    return 1;
}

// rawset that leaves protected tables alone: effect wrappers are shared with the user
// script and other effects, and a raw field would shadow their metatable's __index.
static int sandbox_rawset(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL) return luaL_error(L, "rawset: cannot change a protected table");
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int sandbox_collectgarbage(lua_State *L) {
    const char *option = luaL_optstring(L, 1, "collect");
    if (strcmp(option, "count") != 0) return luaL_error(L, "collectgarbage: effects may only ask for \"count\"");
    int kilobytes = lua_gc(L, LUA_GCCOUNT);
    int bytes = lua_gc(L, LUA_GCCOUNTB);
    lua_pushnumber(L, (lua_Number)kilobytes + (lua_Number)bytes / 1024);
    return 1;
}

// loadText(source, chunkname, env): loads text (never bytecode) with `env` as its _ENV.
// Returns the function, or nil and the message.
static int load_text(lua_State *L) {
    size_t length;
    const char *source = luaL_checklstring(L, 1, &length);
    const char *chunkname = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    if (length > 0 && source[0] == LUA_SIGNATURE[0]) {
        luaL_pushfail(L);
        lua_pushfstring(L, "%s: " MOON_BINARY_CHUNK_REFUSED, chunkname + (*chunkname == '@' || *chunkname == '='));
        return 2;
    }
    if (luaL_loadbufferx(L, source, length, chunkname, "t") != LUA_OK) {
        luaL_pushfail(L);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushvalue(L, 3);
    lua_setupvalue(L, -2, 1);
    return 1;
}

// readonly(real, allowed, label): a proxy through which `real`'s fields named in
// `allowed` (a set, or nil for all) can be read, walked (pairs, #) and nothing written.
// Nested tables are proxied in turn. Upvalues, which scripts cannot reach, hold the real table.
static int readonly_index(lua_State *L);
static int readonly_pairs(lua_State *L);
static int readonly_length(lua_State *L);
static int raise_readonly(lua_State *L);

static void push_readonly(lua_State *L, int real, int allowed, const char *label) {
    real = lua_absindex(L, real);
    allowed = lua_absindex(L, allowed);
    lua_createtable(L, 0, 0);                                   // proxy
    lua_createtable(L, 0, 3);                                   // proxy mt
    lua_pushvalue(L, real);
    lua_pushvalue(L, allowed);
    lua_pushstring(L, label);
    lua_pushcclosure(L, readonly_index, 3);
    lua_setfield(L, -2, "__index");
    lua_pushvalue(L, real);
    lua_pushvalue(L, allowed);
    lua_pushstring(L, label);
    lua_pushcclosure(L, readonly_pairs, 3);
    lua_setfield(L, -2, "__pairs");
    lua_pushvalue(L, real);
    lua_pushcclosure(L, readonly_length, 1);
    lua_setfield(L, -2, "__len");
    lua_pushstring(L, label);
    lua_pushcclosure(L, raise_readonly, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);                                    // proxy
}

static int readonly_index(lua_State *L) {
    const char *label = lua_tostring(L, lua_upvalueindex(3));
    int allowed = lua_type(L, lua_upvalueindex(2)) == LUA_TNIL;
    if (!allowed) {
        lua_pushvalue(L, 2);
        allowed = lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL;
        lua_pop(L, 1);
    }
    lua_pushvalue(L, 2);
    int type = lua_rawget(L, lua_upvalueindex(1));
    if (type == LUA_TNIL) return 1;
    if (!allowed) {
        if (lua_type(L, 2) == LUA_TSTRING) return luaL_error(L, "%s.%s is not available to effects", label, lua_tostring(L, 2));
        lua_pushnil(L);
        return 1;
    }
    if (type != LUA_TTABLE) return 1;
    if (lua_type(L, 2) == LUA_TSTRING) lua_pushfstring(L, "%s.%s", label, lua_tostring(L, 2));
    else lua_pushstring(L, label);
    lua_pushnil(L);
    push_readonly(L, -3, -1, lua_tostring(L, -2));
    return 1;
}

// The iterator of pairs(proxy): (proxy, key) → the next allowed key of the real table and
// its value as __index gives it (a nested table proxied). Upvalues as readonly_index's.
static int readonly_next(lua_State *L) {
    lua_settop(L, 2);                                           // proxy key
    lua_pushvalue(L, lua_upvalueindex(1));                      // proxy key real
    lua_pushvalue(L, 2);                                        // proxy key real key
    while (lua_next(L, 3)) {                                    // proxy key real k v
        int allowed = lua_type(L, lua_upvalueindex(2)) == LUA_TNIL;
        if (!allowed) {
            lua_pushvalue(L, -2);
            allowed = lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL;
            lua_pop(L, 1);
        }
        if (!allowed) {
            lua_pop(L, 1);                                      // proxy key real k
            continue;
        }
        if (lua_type(L, -1) != LUA_TTABLE) return 2;
        const char *label = lua_tostring(L, lua_upvalueindex(3));
        if (lua_type(L, -2) == LUA_TSTRING) lua_pushfstring(L, "%s.%s", label, lua_tostring(L, -2));
        else lua_pushstring(L, label);                          // ... k v label
        lua_pushnil(L);                                         // ... k v label nil
        push_readonly(L, -3, -1, lua_tostring(L, -2));          // ... k v label nil proxy
        lua_replace(L, -4);                                     // ... k proxy label nil
        lua_pop(L, 2);                                          // ... k proxy
        return 2;
    }
    return 0;
}

static int readonly_pairs(lua_State *L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, lua_upvalueindex(3));
    lua_pushcclosure(L, readonly_next, 3);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int readonly_length(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)));
    return 1;
}

static int raise_readonly(lua_State *L) {
    return luaL_error(L, "%s is read-only in effects", lua_tostring(L, lua_upvalueindex(1)));
}

int moon_readonly_target(lua_State *L, int index) {
    index = lua_absindex(L, index);
    if (lua_type(L, index) != LUA_TTABLE || !lua_getmetatable(L, index)) return 0;
    lua_pushliteral(L, "__index");
    int type = lua_rawget(L, -2);                               // mt index
    if (type != LUA_TFUNCTION || lua_tocfunction(L, -1) != readonly_index) {
        lua_pop(L, 2);
        return 0;
    }
    lua_getupvalue(L, -1, 2);                                   // mt index allowed
    int whole = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!whole) {
        lua_pop(L, 2);
        return 2;
    }
    lua_getupvalue(L, -1, 1);                                   // mt index real
    lua_replace(L, -3);                                         // real index
    lua_pop(L, 1);
    return 1;
}

static int readonly(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *label = luaL_checkstring(L, 3);
    push_readonly(L, 1, 2, label);
    return 1;
}

// typeName(value): a Moonreel object's class ("Layer"), else the Lua type ("userdata").
static int type_name(lua_State *L) {
    luaL_checkany(L, 1);
    if (lua_type(L, 1) == LUA_TUSERDATA && luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) {
        const char *name = lua_tostring(L, -1);
        lua_pushstring(L, strncmp(name, "moonreel.", 9) == 0 ? name + 9 : name);
        return 1;
    }
    lua_pushstring(L, luaL_typename(L, 1));
    return 1;
}

// raiseFromScript(message): raises positioned at the nearest script line, skipping the
// host's own "=[moonreel ...]" Lua code (so parameter errors name the caller's line).
static int raise_from_script(lua_State *L) {
    luaL_checkstring(L, 1);
    lua_settop(L, 1);
    return moon_raise_from_script(L);
}

int moon_sandbox_helpers(lua_State *L) {
    static const luaL_Reg helpers[] = {
        {"setmetatable", sandbox_setmetatable},
        {"getmetatable", sandbox_getmetatable},
        {"collectgarbage", sandbox_collectgarbage},
        {"rawset", sandbox_rawset},
        {"loadText", load_text},
        {"readonly", readonly},
        {"raiseFromScript", raise_from_script},
        {"typeName", type_name},
        {NULL, NULL}};
    luaL_newlib(L, helpers);
    return 1;
}

// The globals of an effect's own state: the base library without loading or collecting
// (and with the sandbox's metatable functions), string without dump, table, math, utf8 and
// coroutine; no io, os, debug or package. `require` comes from the effect glue.
int moon_open_effect_libraries(lua_State *L) {
    static const luaL_Reg libraries[] = {
        {LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table},
        {LUA_MATHLIBNAME, luaopen_math}, {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_COLIBNAME, luaopen_coroutine},
        {NULL, NULL}};
    for (const luaL_Reg *library = libraries; library->name; library++) {
        luaL_requiref(L, library->name, library->func, 1);
        lua_pop(L, 1);
    }
    static const char *const removed[] = {"dofile", "loadfile", "load", "warn", NULL};
    for (const char *const *name = removed; *name; name++) {
        lua_pushnil(L);
        lua_setglobal(L, *name);
    }
    static const luaL_Reg replaced[] = {
        {"setmetatable", sandbox_setmetatable}, {"getmetatable", sandbox_getmetatable},
        {"collectgarbage", sandbox_collectgarbage}, {"rawset", sandbox_rawset}, {NULL, NULL}};
    lua_pushglobaltable(L);
    luaL_setfuncs(L, replaced, 0);
    lua_pop(L, 1);
    lua_getglobal(L, LUA_STRLIBNAME);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    install_budgeted_patterns(L);
    moon_install_error_fields(L);
    protect_string_metatable(L);
    install_stop_guards(L);
    return 0;
}
