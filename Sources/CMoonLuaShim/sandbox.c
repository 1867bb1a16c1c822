// Library setup for the two trust levels: trusted user scripts (full libraries, text-only
// chunks) and untrusted effect scripts (the C pieces of the sandbox that EffectGlue.swift
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
    protect_string_metatable(L);
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
// `allowed` (a set, or nil for all) can be read, and nothing written. Nested tables are
// proxied in turn. Upvalues, which scripts cannot reach, hold the real table.
static int readonly_index(lua_State *L);
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

static int raise_readonly(lua_State *L) {
    return luaL_error(L, "%s is read-only in effects", lua_tostring(L, lua_upvalueindex(1)));
}

static int readonly(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *label = luaL_checkstring(L, 3);
    push_readonly(L, 1, 2, label);
    return 1;
}

// raiseFromScript(message): raises positioned at the nearest script line, skipping the
// host's own "=[moonreel ...]" Lua code (so parameter errors name the caller's line).
static int raise_from_script(lua_State *L) {
    luaL_checkstring(L, 1);
    lua_settop(L, 1);
    return moon_raise_from_script(L);
}

// MARK: Nested limits for effect calls

// While an effect runs, the budget is the tighter of the caller's and the effect's own.
// enterLimits(instructions|nil, seconds|nil) returns a to-be-closed guard; closing it (also
// while an error unwinds) charges what the effect used to the caller and restores the
// caller's limits. A limit the caller had already exhausted stays exhausted.
typedef struct limit_guard {
    moon_budget saved;
    int64_t entry_left;
    int open;
} limit_guard;

static const char *const GUARD_METATABLE = "moonreel.limitguard";

static int close_limits(lua_State *L) {
    limit_guard *guard = luaL_checkudata(L, 1, GUARD_METATABLE);
    if (!guard->open) return 0;
    guard->open = 0;
    moon_budget *b = moon_budget_of(L);
    int64_t used = guard->entry_left >= 0 ? guard->entry_left - b->instructions_left : 0;
    int *interrupt = b->interrupt;
    *b = guard->saved;
    b->interrupt = interrupt;
    if (b->instructions_left > 0) b->instructions_left = b->instructions_left > used ? b->instructions_left - used : 0;
    return 0;
}

static int enter_limits(lua_State *L) {
    lua_Integer instructions = luaL_optinteger(L, 1, -1);
    lua_Number seconds = luaL_optnumber(L, 2, 0);
    limit_guard *guard = lua_newuserdatauv(L, sizeof *guard, 0);
    moon_budget *b = moon_budget_of(L);
    guard->saved = *b;
    guard->open = 1;
    if (instructions > 0 && (b->instructions_left < 0 || instructions < b->instructions_left)) {
        b->instructions_left = instructions;
        b->instruction_limit = instructions;
    }
    double deadline = seconds > 0 ? moon_monotonic_now() + seconds : 0;
    if (deadline > 0 && (b->deadline == 0 || deadline < b->deadline)) {
        b->deadline = deadline;
        b->time_limit = seconds;
    }
    guard->entry_left = b->instructions_left;
    if (luaL_newmetatable(L, GUARD_METATABLE)) {
        lua_pushcfunction(L, close_limits);
        lua_setfield(L, -2, "__close");
    }
    lua_setmetatable(L, -2);
    return 1;
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
        {"enterLimits", enter_limits},
        {"openTable", luaopen_table},
        {"openMath", luaopen_math},
        {"openUtf8", luaopen_utf8},
        {"openCoroutine", luaopen_coroutine},
        {NULL, NULL}};
    luaL_newlib(L, helpers);
    return 1;
}
