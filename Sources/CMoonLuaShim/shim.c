#include "cmoonluashim.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

int moon_gc(lua_State *L, int what, int a) { return lua_gc(L, what, a); }

static int trampoline(lua_State *L) {
    moon_swift_fn fn = (moon_swift_fn)lua_touserdata(L, lua_upvalueindex(1));
    int results = fn(L);
    if (results >= 0) return results;
    if (results == MOON_RAISE_VALUE) return lua_error(L);
    int level = 1;
    if (results == MOON_RAISE_FROM_SCRIPT) {
        // Walk up to the first Lua function whose source is not a bundled "=[moonreel]" chunk.
        lua_Debug ar;
        for (int l = 1; lua_getstack(L, l, &ar); l++) {
            lua_getinfo(L, "Sl", &ar);
            if (ar.currentline > 0 && strncmp(ar.source, "=[moonreel", 10) != 0) { level = l; break; }
        }
    }
    luaL_where(L, level);
    lua_rotate(L, -2, 1);
    lua_concat(L, 2);
    return lua_error(L);
}

void moon_pushclosure(lua_State *L, moon_swift_fn fn, int extra) {
    lua_pushlightuserdata(L, (void *)fn);
    lua_rotate(L, -(extra + 1), 1);
    lua_pushcclosure(L, trampoline, extra + 1);
}

double moon_monotonic_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Allocator with a cap. Lua raises LUA_ERRMEM ("not enough memory") when it returns NULL.
typedef struct moon_alloc_state {
    size_t used;
    size_t limit; // 0: unlimited
} moon_alloc_state;

typedef struct moon_state_extra {
    moon_budget budget;
    moon_alloc_state alloc;
} moon_state_extra;

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    moon_alloc_state *state = ud;
    size_t old = ptr ? osize : 0; // when ptr is NULL, osize is a type tag
    if (nsize == 0) {
        free(ptr);
        state->used -= old;
        return NULL;
    }
    if (state->limit && nsize > old && state->used - old + nsize > state->limit) return NULL;
    void *p = realloc(ptr, nsize);
    if (p) state->used = state->used - old + nsize;
    return p;
}

lua_State *moon_newstate(size_t memory_limit) {
    moon_state_extra *extra = calloc(1, sizeof *extra);
    if (!extra) return NULL;
    extra->alloc.limit = memory_limit;
    extra->budget.instructions_left = -1;
    extra->budget.instruction_limit = -1;
    lua_State *L = lua_newstate(capped_alloc, &extra->alloc);
    if (!L) { free(extra); return NULL; }
    *(moon_state_extra **)lua_getextraspace(L) = extra;
    return L;
}

static moon_state_extra *extra_of(lua_State *L) { return *(moon_state_extra **)lua_getextraspace(L); }
moon_budget *moon_budget_of(lua_State *L) { return &extra_of(L)->budget; }
size_t moon_memory_used(lua_State *L) { return extra_of(L)->alloc.used; }
size_t moon_memory_limit(lua_State *L) { return extra_of(L)->alloc.limit; }
void moon_set_memory_limit(lua_State *L, size_t limit) { extra_of(L)->alloc.limit = limit; }

void moon_closestate(lua_State *L) {
    moon_state_extra *extra = extra_of(L);
    extra->alloc.limit = 0; // finalizers that run during close may allocate
    lua_close(L);
    free(extra);
}

void moon_interrupt(moon_budget *budget) { __atomic_store_n(&budget->interrupt, 1, __ATOMIC_SEQ_CST); }
void moon_clear_interrupt(moon_budget *budget) { __atomic_store_n(&budget->interrupt, 0, __ATOMIC_SEQ_CST); }

#define HOOK_INTERVAL 1000

// Runs every HOOK_INTERVAL instructions, in every coroutine (they share the extraspace).
// Errors raised here cannot be swallowed for long: once a limit is hit, the budget stays
// exhausted, so a pcall that catches the error is stopped again within 1000 instructions.
static void count_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    moon_budget *b = moon_budget_of(L);
    if (__atomic_load_n(&b->interrupt, __ATOMIC_SEQ_CST)) {
        luaL_where(L, 0);
        lua_pushstring(L, "interrupted");
        lua_concat(L, 2);
        lua_error(L);
    }
    if (b->instructions_left >= 0) {
        b->instructions_left -= HOOK_INTERVAL;
        if (b->instructions_left < 0) {
            b->instructions_left = 0;
            luaL_where(L, 0);
            lua_pushfstring(L, "script exceeded its instruction limit (%I instructions)",
                            (LUAI_UACINT)b->instruction_limit);
            lua_concat(L, 2);
            lua_error(L);
        }
    }
    if (b->deadline > 0 && moon_monotonic_now() > b->deadline) {
        luaL_where(L, 0);
        lua_pushfstring(L, "script exceeded its time limit (%.1f s)", b->time_limit);
        lua_concat(L, 2);
        lua_error(L);
    }
}

void moon_install_hook(lua_State *L) { lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_INTERVAL); }

int moon_msghandler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        // Error object that is not a string: use __tostring only if it is a string already
        // computed; calling it here could loop forever, so report the type instead.
        if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING)
            msg = lua_pushfstring(L, "(error object is a %s value)", lua_tostring(L, -1));
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}
