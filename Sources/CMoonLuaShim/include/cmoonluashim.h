#ifndef CMOONLUASHIM_H
#define CMOONLUASHIM_H
// The C half of Moonreel's Lua embedding. Everything here exists because Swift cannot
// import it (macros, variadics) or must not run it (anything that longjmps).
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>

// LUA_REGISTRYINDEX expands to an expression Swift cannot import.
static const int MOON_LUA_REGISTRYINDEX = LUA_REGISTRYINDEX;
// lua_upvalueindex is a function-like macro over LUA_REGISTRYINDEX.
static inline int moon_upvalueindex(int i) { return lua_upvalueindex(i); }
// lua_gc is variadic in 5.4.
int moon_gc(lua_State *L, int what, int a);

// Returned by a Swift function (through the trampoline) to raise the string on top of the
// stack as an error, prefixed with the caller's position ("file.lua:12: ").
#define MOON_RAISE (-1)
// As MOON_RAISE, but raises the value on top of the stack as it is (no position added).
#define MOON_RAISE_VALUE (-2)
// As MOON_RAISE, but the position is that of the script's nearest Lua frame, for
// functions that Lua sugar wraps (so the user's line is named, not the wrapper's).
#define MOON_RAISE_FROM_SCRIPT (-3)
// As MOON_RAISE for the message three below the top, with its kind (a string) and subject
// (a string or nil) above it: the raised error is still the positioned string, and the
// state remembers its kind, subject and message for `err.kind` (see raise_kinded in shim.c).
#define MOON_RAISE_KINDED (-4)
// As MOON_RAISE_KINDED, but the message already names its place (an effect's error crossing
// into its caller) and is raised as it is.
#define MOON_RAISE_KINDED_VALUE (-5)

// Replaces the message, kind and subject on top of the stack with the text `where` ..
// message, remembered as an error's (its `err.kind`, `err.subject` and `err.message` answer),
// for an error a function returns rather than raises (`nil, err`). Uses 4 more stack slots
// at most (it makes sure of them).
void moon_push_kinded_error(lua_State *L, const char *where);

// Pushes the kind and subject remembered for the error text at `index` (a string raised
// with MOON_RAISE_KINDED or pushed by moon_push_kinded_error), or two nils.
void moon_push_error_fields(lua_State *L, int index);

typedef int (*moon_swift_fn)(lua_State *L);
// lua_pcall for the host: the only way Swift runs Lua code. The memory cap holds only while
// Lua runs (between this call and a Swift function it calls), so no allocation the host
// makes is refused and no error longjmps through a Swift frame; see shim.c.
int moon_pcall(lua_State *L, int nargs, int nresults, int msgh);
// luaL_loadbufferx in text mode, under the memory cap (loading is protected by Lua itself).
int moon_load(lua_State *L, const char *text, size_t size, const char *chunk_name);
// Pushes a C closure that calls `fn` with `extra` more upvalues already on the stack
// (upvalue 1 is `fn`, upvalues 2... are the `extra` values). Errors are raised in C.
void moon_pushclosure(lua_State *L, moon_swift_fn fn, int extra);

// Limits. One budget per lua_State, reached through lua_getextraspace, shared by coroutines.
// Once a limit is hit it stays hit (the budget is not refilled) until the host rearms it,
// and every instruction raises again, so `pcall` cannot swallow the stop.
typedef struct moon_budget {
    int64_t instructions_left;     // < 0: unlimited
    int64_t instruction_limit;     // for the message
    double deadline;               // CLOCK_MONOTONIC seconds; 0: none
    double time_limit;             // seconds, for the message
    int *interrupt;                // set from any thread (Ctrl-C); owned by the host
    int stop_reason;               // MOON_STOP_…: which limit stopped the script (the host clears it)
} moon_budget;

enum { MOON_STOP_NONE = 0, MOON_STOP_INTERRUPTED = 1, MOON_STOP_INSTRUCTIONS = 2, MOON_STOP_TIME = 3 };
// Whether a limit has stopped the script running in L (until the host rearms the budget).
int moon_stopped(lua_State *L);

lua_State *moon_newstate(size_t memory_limit);
size_t moon_memory_used(lua_State *L);
size_t moon_memory_limit(lua_State *L);
void moon_set_memory_limit(lua_State *L, size_t limit);
// How many allocations were refused by the cap since the last moon_clear_memory_refusals,
// and where the last one happened ("chunk:line:", or "" when unknown).
int moon_memory_refusals(lua_State *L);
const char *moon_memory_refusal_position(lua_State *L);
void moon_clear_memory_refusals(lua_State *L);
// Engine objects made for a state's scripts count against its cap too: the host keeps the
// total here, and the sweeper (called when an allocation would not fit, with `context`)
// recounts it, leaving out objects freed since.
typedef void (*moon_sweeper)(void *context);
void moon_set_engine_memory(lua_State *L, size_t bytes);
size_t moon_engine_memory(lua_State *L);
void moon_set_memory_sweeper(lua_State *L, moon_sweeper sweeper, void *context);
// The host object a state belongs to (shared by its coroutines), for Swift code that has L only.
void moon_set_host_context(lua_State *L, void *context);
void *moon_host_context(lua_State *L);
// Whether host code (not Lua code) is running in L: see moon_pcall.
int moon_host_is_running(lua_State *L);
moon_budget *moon_budget_of(lua_State *L);
void moon_install_hook(lua_State *L);
void moon_interrupt(moon_budget *budget);
void moon_clear_interrupt(moon_budget *budget);
// Sets an interrupt flag atomically (Swift has no portable atomic store on a C int).
static inline void moon_store_flag(int *flag, int value) { __atomic_store_n(flag, value, __ATOMIC_SEQ_CST); }
// Points the budget at an interrupt flag that outlives the state (or NULL for none).
void moon_set_interrupt_flag(moon_budget *budget, int *flag);
double moon_monotonic_now(void);
void moon_closestate(lua_State *L);
// Counts `steps` of work done inside a C library function against the budget and raises
// (positioned at the calling Lua line) if a limit has been hit. Used by the pattern matcher,
// where the count hook never runs.
void moon_charge(lua_State *L, int64_t steps);

// The stack level of the nearest Lua function that is not Moonreel's own Lua (chunks named
// "=[moonreel…"), with a current line; 0 when there is none. For positions in messages.
int moon_script_level(lua_State *L);

// lua.c's message handler: turns any error into "msg\nstack traceback:...". Error objects
// that are not strings are described by type, never through __tostring (which could loop).
int moon_msghandler(lua_State *L);

// Why a chunk starting with "\x1bLua" is not loaded (bytecode can crash the VM).
#define MOON_BINARY_CHUNK_REFUSED "precompiled (binary) chunks are refused; Moonreel loads Lua source text only"
static const char *const moon_binary_chunk_refused = MOON_BINARY_CHUNK_REFUSED;

// Standard libraries for a trusted user script: everything, but chunks load as text only
// (load, loadfile, dofile, require's Lua searcher), string patterns use the budgeted matcher
// and the string metatable is protected. Lua-callable: call it through lua_pcall.
int moon_open_user_libraries(lua_State *L);
// The globals of an effect's own state (see sandbox.c). Lua-callable: call it through lua_pcall.
int moon_open_effect_libraries(lua_State *L);
// A table of the C helpers the effect sandbox is built from (see ScriptHost/Lua/effect_host.lua).
// Lua-callable: call it through lua_pcall.
int moon_sandbox_helpers(lua_State *L);
// Whether the value at `index` is a read-only view the sandbox made: 0 when it is not; 1 when
// it shows its whole table, which is pushed (so a copy can carry what the view shows); 2 when
// it shows only some fields (nothing pushed).
int moon_readonly_target(lua_State *L, int index);
// string.find/match/gmatch/gsub with a matcher that counts its steps (pattern.c).
int moon_str_find(lua_State *L);
int moon_str_match(lua_State *L);
int moon_str_gmatch(lua_State *L);
int moon_str_gsub(lua_State *L);

// Convenience wrappers for function-like macros.
static inline void moon_pop(lua_State *L, int n) { lua_settop(L, -(n) - 1); }
static inline void moon_newtable(lua_State *L) { lua_createtable(L, 0, 0); }
static inline const char *moon_tostring(lua_State *L, int i) { return lua_tolstring(L, i, NULL); }
static inline void moon_pushglobaltable(lua_State *L) { lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS); }
static inline int moon_getmetatable_named(lua_State *L, const char *name) { return lua_getfield(L, LUA_REGISTRYINDEX, name); }
static inline void moon_insert(lua_State *L, int idx) { lua_rotate(L, idx, 1); }
static inline void moon_remove(lua_State *L, int idx) { lua_rotate(L, idx, -1); lua_settop(L, -2); }

#endif
