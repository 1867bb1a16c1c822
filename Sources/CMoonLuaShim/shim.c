#include "internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int moon_gc(lua_State *L, int what, int a) { return lua_gc(L, what, a); }

int moon_script_level(lua_State *L) {
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline > 0 && strncmp(ar.source, "=[moonreel", 10) != 0) return level;
    }
    return 0;
}

// Pushes "chunk:line: " of the nearest script line, or "" when only host code is running
// (Swift called the host's Lua directly).
static void push_script_where(lua_State *L) {
    int level = moon_script_level(L);
    if (level > 0) luaL_where(L, level);
    else lua_pushliteral(L, "");
}

static int enter_host(lua_State *L);
static void leave_host(lua_State *L, int was_host);
static void raise_if_over_limit(lua_State *L);
static void raise_if_interrupted(lua_State *L);

int moon_raise_from_script(lua_State *L) {
    push_script_where(L);
    lua_rotate(L, -2, 1);
    lua_concat(L, 2);
    return lua_error(L);
}

// Error kinds. A Swift function's error stays a string for the script (printing, matching,
// comparing and concatenating it work as they always have); the state remembers the kind,
// subject and message of the last ERROR_MEMORY errors it raised, keyed by their full text,
// and the strings' __index answers `err.kind`, `err.subject` and `err.message` from there.
#define ERRORS_KEY "moonreel.errorfields"
enum { ERROR_MEMORY = 64 };

// Remembers the kind, subject and message at those indices for the error text on top of
// the stack, which stays there.
static void remember_error(lua_State *L, int message, int kind, int subject) {
    int text = lua_gettop(L);
    lua_Integer count = 0;
    if (lua_getfield(L, LUA_REGISTRYINDEX, ERRORS_KEY) == LUA_TTABLE) {
        lua_rawgeti(L, -1, 1);                                  // ... text errors count
        count = lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    if (count <= 0 || count >= ERROR_MEMORY) {                  // start over: a bounded memory
        lua_pop(L, 1);
        lua_createtable(L, 1, ERROR_MEMORY);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, ERRORS_KEY);
        count = 0;
    }
    lua_pushinteger(L, count + 1);
    lua_rawseti(L, -2, 1);                                      // ... text errors
    lua_createtable(L, 0, 3);                                   // ... text errors fields
    lua_pushvalue(L, kind);
    lua_setfield(L, -2, "kind");
    lua_pushvalue(L, subject);
    lua_setfield(L, -2, "subject");
    lua_pushvalue(L, message);
    lua_setfield(L, -2, "message");
    lua_pushvalue(L, text);
    lua_rotate(L, -2, 1);                                       // ... text errors text fields
    lua_rawset(L, -3);
    lua_pop(L, 1);                                              // ... text
}

// ... message kind subject -> raises "where" .. message (or the message as it is, when it
// already names its place), remembering the fields.
static int raise_kinded(lua_State *L, int positioned) {
    int subject = lua_gettop(L), kind = subject - 1, message = subject - 2;
    if (positioned) {
        lua_pushvalue(L, message);
    } else {
        luaL_where(L, 1);
        lua_pushvalue(L, message);
        lua_concat(L, 2);
    }
    remember_error(L, message, kind, subject);
    return lua_error(L);
}

void moon_push_kinded_error(lua_State *L, const char *where) {
    lua_checkstack(L, 4);                                       // the text, the errors, a record, a value
    int subject = lua_gettop(L), kind = subject - 1, message = subject - 2;
    lua_pushstring(L, where);
    lua_pushvalue(L, message);
    lua_concat(L, 2);                                           // ... message kind subject text
    remember_error(L, message, kind, subject);
    lua_replace(L, message);
    lua_pop(L, 2);                                              // ... text
}

// Pushes the fields table remembered for the error text at `index` and returns 1, or pushes
// nothing and returns 0.
static int push_fields_table(lua_State *L, int index) {
    index = lua_absindex(L, index);
    if (lua_getfield(L, LUA_REGISTRYINDEX, ERRORS_KEY) == LUA_TTABLE) {
        lua_pushvalue(L, index);
        if (lua_rawget(L, -2) == LUA_TTABLE) {                  // errors fields
            lua_remove(L, -2);
            return 1;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

// __index of strings: string library functions as before (`s:upper()`), and for the text of
// an error raised with MOON_RAISE_KINDED, its `kind`, `subject` and `message` (nil for any
// other string). Upvalue 1 is the string table.
static int string_index(lua_State *L) {
    lua_pushvalue(L, 2);
    // A string library function first (`s:upper()`, the common case): one table lookup.
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL || lua_type(L, 2) != LUA_TSTRING) return 1;
    const char *key = lua_tostring(L, 2);
    if (strcmp(key, "kind") != 0 && strcmp(key, "subject") != 0 && strcmp(key, "message") != 0) return 1;
    if (push_fields_table(L, 1)) {
        lua_pushvalue(L, 2);
        lua_rawget(L, -2);
        return 1;
    }
    lua_pushnil(L);
    return 1;
}

void moon_push_error_fields(lua_State *L, int index) {
    if (!push_fields_table(L, index)) {
        lua_pushnil(L);
        lua_pushnil(L);
        return;
    }
    lua_getfield(L, -1, "kind");
    lua_getfield(L, -2, "subject");                             // fields kind subject
    lua_remove(L, -3);
}

void moon_install_error_fields(lua_State *L) {
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);                                    // "" mt
    lua_getglobal(L, LUA_STRLIBNAME);                           // "" mt string
    lua_pushcclosure(L, string_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 2);
}

static int trampoline(lua_State *L) {
    moon_swift_fn fn = (moon_swift_fn)lua_touserdata(L, lua_upvalueindex(1));
    int was_host = enter_host(L);
    int results = fn(L);
    leave_host(L, was_host);
    if (!was_host) {
        raise_if_over_limit(L);
        // An error raised as it is (an effect's, crossing into its caller) already says why
        // it stopped: an interrupt that came meanwhile (the host's timer, just after the
        // effect's own time limit) must not replace it; it stops the script at its next check.
        if (results != MOON_RAISE_VALUE && results != MOON_RAISE_KINDED_VALUE) raise_if_interrupted(L);
    }
    if (results >= 0) return results;
    if (results == MOON_RAISE_VALUE) return lua_error(L);
    if (results == MOON_RAISE_FROM_SCRIPT) return moon_raise_from_script(L);
    if (results == MOON_RAISE_KINDED) return raise_kinded(L, 0);
    if (results == MOON_RAISE_KINDED_VALUE) return raise_kinded(L, 1);
    luaL_where(L, 1);
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

// Allocator with a cap. Lua raises LUA_ERRMEM ("not enough memory") when it returns NULL,
// a longjmp that must never cross a Swift frame. So the cap holds only while Lua code runs
// (under moon_pcall); while the host runs (Swift functions called from Lua, and the host
// between calls) nothing is refused and the collector is paused, so no finalizer runs there
// either. When a Swift function returns to Lua over the cap, the trampoline raises, from C.
typedef struct moon_alloc_state {
    size_t used;
    size_t limit; // 0: unlimited
    size_t engine_used; // engine objects made for this state's scripts (set by the host)
    moon_sweeper sweeper; // recounts engine_used (objects freed since), or NULL
    void *sweeper_context;
    int host_running;
    int collector_paused; // by the host, which restarts it when Lua runs again
    lua_State *main;
    int refusals;
    char refusal_position[LUA_IDSIZE + 24];
} moon_alloc_state;

typedef struct moon_state_extra {
    moon_budget budget;
    moon_alloc_state alloc;
    void *host_context;
} moon_state_extra;

// LUA_ERRMEM never reaches a message handler, so the script line is taken here, when the
// cap refuses. Reading the call stack inside an allocation is safe only while Lua keeps
// real pointers in its CallInfos during a stack reallocation (up to 5.4.5; 5.4.6 turns
// them into offsets for the duration), so later versions report the script name only.
static void note_refusal(moon_alloc_state *state) {
    state->refusals++;
    state->refusal_position[0] = '\0';
#if LUA_VERSION_RELEASE_NUM <= 50405
    lua_State *L = state->main;
    lua_Debug ar;
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline > 0 && strncmp(ar.source, "=[moonreel", 10) != 0) {
            snprintf(state->refusal_position, sizeof state->refusal_position, "%s:%d:", ar.short_src, ar.currentline);
            return;
        }
    }
#endif
}

// Whether `extra` more bytes of Lua heap fit under the cap beside the engine's objects;
// before saying no, asks the host to forget engine objects freed since it last counted.
static int fits(moon_alloc_state *state, size_t extra) {
    if (state->used + state->engine_used + extra <= state->limit) return 1;
    if (!state->sweeper) return 0;
    state->sweeper(state->sweeper_context);
    return state->used + state->engine_used + extra <= state->limit;
}

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    moon_alloc_state *state = ud;
    size_t old = ptr ? osize : 0; // when ptr is NULL, osize is a type tag
    if (nsize == 0) {
        free(ptr);
        state->used -= old;
        return NULL;
    }
    if (state->limit && !state->host_running && nsize > old && !fits(state, nsize - old)) {
        note_refusal(state);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p && state->host_running) {
        // Lua would raise through Swift frames; the system itself is out of memory.
        fputs("moonreel: the system is out of memory\n", stderr);
        abort();
    }
    if (p) state->used = state->used - old + nsize;
    return p;
}

lua_State *moon_newstate(size_t memory_limit) {
    moon_state_extra *extra = calloc(1, sizeof *extra);
    if (!extra) return NULL;
    extra->alloc.limit = memory_limit;
    extra->alloc.host_running = 1;
    extra->budget.instructions_left = -1;
    extra->budget.instruction_limit = -1;
    lua_State *L = lua_newstate(capped_alloc, &extra->alloc);
    if (!L) { free(extra); return NULL; }
    extra->alloc.main = L;
    *(moon_state_extra **)lua_getextraspace(L) = extra;
    // The collector is stopped while the host runs and restarted after each call into it;
    // a restart starts a collection step at once, of `stepsize` work. With Lua's 8 KiB an
    // effect keeping 50 000 tables paid a step in each of its 4 000 layer calls (bench:
    // effect-calls, 0.40 of the time with 1 KiB); a pure-Lua allocation loop is unchanged
    // (1.00) and so is its peak memory, since the collector's pace per byte (stepmul) is.
    lua_gc(L, LUA_GCINC, 0, 0, 10);
    lua_gc(L, LUA_GCSTOP); // the host runs first
    extra->alloc.collector_paused = 1;
    return L;
}

static moon_state_extra *extra_of(lua_State *L) { return *(moon_state_extra **)lua_getextraspace(L); }

// The host takes over from Lua: nothing is refused from now on, and the collector pauses
// (unless a script stopped it, or a finalizer runs, where lua_gc answers -1). Returns the
// previous mark for leave_host.
static int enter_host(lua_State *L) {
    moon_alloc_state *alloc = &extra_of(L)->alloc;
    int was_host = alloc->host_running;
    if (!was_host && lua_gc(L, LUA_GCISRUNNING) == 1) {
        lua_gc(L, LUA_GCSTOP);
        alloc->collector_paused = 1;
    }
    alloc->host_running = 1;
    return was_host;
}

static void leave_host(lua_State *L, int was_host) {
    moon_alloc_state *alloc = &extra_of(L)->alloc;
    alloc->host_running = was_host;
    if (!was_host && alloc->collector_paused) {
        alloc->collector_paused = 0;
        lua_gc(L, LUA_GCRESTART);
    }
}

// A Swift function that took the Lua heap over the cap fails as an allocation would have,
// once it has returned (after a full collection, which may bring the heap back under).
static void raise_if_over_limit(lua_State *L) {
    moon_alloc_state *alloc = &extra_of(L)->alloc;
    if (!alloc->limit || fits(alloc, 0)) return;
    lua_gc(L, LUA_GCCOLLECT); // frees userdata, and so the engine objects only they held
    if (fits(alloc, 0)) return;
    note_refusal(alloc);
    lua_pushliteral(L, "not enough memory"); // Lua keeps this string: pushing it allocates nothing
    lua_error(L);
}

int moon_load(lua_State *L, const char *text, size_t size, const char *chunk_name) {
    moon_alloc_state *alloc = &extra_of(L)->alloc;
    int was_host = alloc->host_running;
    alloc->host_running = 0; // lua_load is protected: a refusal comes back as a status
    int status = luaL_loadbufferx(L, text, size, chunk_name, "t");
    alloc->host_running = was_host;
    return status;
}

// The reverse of the trampoline: the host hands over to Lua, under the cap.
int moon_pcall(lua_State *L, int nargs, int nresults, int msgh) {
    moon_alloc_state *alloc = &extra_of(L)->alloc;
    int was_host = alloc->host_running;
    alloc->host_running = 0;
    if (alloc->collector_paused) {
        alloc->collector_paused = 0;
        lua_gc(L, LUA_GCRESTART);
    }
    int status = lua_pcallk(L, nargs, nresults, msgh, 0, NULL);
    if (was_host) enter_host(L);
    return status;
}
moon_budget *moon_budget_of(lua_State *L) { return &extra_of(L)->budget; }
size_t moon_memory_used(lua_State *L) { return extra_of(L)->alloc.used; }
size_t moon_memory_limit(lua_State *L) { return extra_of(L)->alloc.limit; }
void moon_set_memory_limit(lua_State *L, size_t limit) { extra_of(L)->alloc.limit = limit; }
void moon_set_engine_memory(lua_State *L, size_t bytes) { extra_of(L)->alloc.engine_used = bytes; }
size_t moon_engine_memory(lua_State *L) { return extra_of(L)->alloc.engine_used; }
void moon_set_memory_sweeper(lua_State *L, moon_sweeper sweeper, void *context) {
    extra_of(L)->alloc.sweeper = sweeper;
    extra_of(L)->alloc.sweeper_context = context;
}
void moon_set_host_context(lua_State *L, void *context) { extra_of(L)->host_context = context; }
void *moon_host_context(lua_State *L) { return extra_of(L)->host_context; }
int moon_host_is_running(lua_State *L) { return extra_of(L)->alloc.host_running; }
int moon_memory_refusals(lua_State *L) { return extra_of(L)->alloc.refusals; }
const char *moon_memory_refusal_position(lua_State *L) { return extra_of(L)->alloc.refusal_position; }
void moon_clear_memory_refusals(lua_State *L) {
    extra_of(L)->alloc.refusals = 0;
    extra_of(L)->alloc.refusal_position[0] = '\0';
}

void moon_closestate(lua_State *L) {
    moon_state_extra *extra = extra_of(L);
    extra->alloc.limit = 0; // finalizers that run during close may allocate
    extra->alloc.sweeper = NULL;
    lua_close(L);
    free(extra);
}

void moon_set_interrupt_flag(moon_budget *budget, int *flag) { budget->interrupt = flag; }
void moon_interrupt(moon_budget *budget) {
    if (budget->interrupt) __atomic_store_n(budget->interrupt, 1, __ATOMIC_SEQ_CST);
}
void moon_clear_interrupt(moon_budget *budget) {
    if (budget->interrupt) __atomic_store_n(budget->interrupt, 0, __ATOMIC_SEQ_CST);
}

#define HOOK_INTERVAL 1000

// Writes why the script must stop into `message` and returns the reason, or returns
// MOON_STOP_NONE.
static int limit_reached(moon_budget *b, char *message, size_t size) {
    // The deadline first: a host that cancels the run when the time is up (an export has
    // no hook) interrupts it too, and the reason is the time limit.
    if (b->deadline > 0 && moon_monotonic_now() > b->deadline) {
        snprintf(message, size, b->time_limit >= 0.1 ? "script exceeded its time limit (%.1f s)"
                                                     : "script exceeded its time limit (%.3g s)",
                 b->time_limit);
        return MOON_STOP_TIME;
    }
    if (b->interrupt && __atomic_load_n(b->interrupt, __ATOMIC_SEQ_CST)) {
        snprintf(message, size, "interrupted");
        return MOON_STOP_INTERRUPTED;
    }
    if (b->instructions_left == 0) {
        snprintf(message, size, "script exceeded its instruction limit (%lld instructions)",
                 (long long)b->instruction_limit);
        return MOON_STOP_INSTRUCTIONS;
    }
    return MOON_STOP_NONE;
}

int moon_stopped(lua_State *L) { return moon_budget_of(L)->stop_reason != MOON_STOP_NONE; }

static void count_hook(lua_State *L, lua_Debug *ar);

// Raises the stop at `level`, after making every thread check before each instruction:
// a pcall (or coroutine.resume) that catches the error is stopped again at its next
// instruction, and so on up to the host, without running more than a few instructions.
static int raise_stop(lua_State *L, int level, int reason, const char *message) {
    moon_budget_of(L)->stop_reason = reason;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    lua_State *main = extra_of(L)->alloc.main;
    if (main != L) lua_sethook(main, count_hook, LUA_MASKCOUNT, 1);
    luaL_where(L, level);
    lua_pushstring(L, message);
    lua_concat(L, 2);
    return lua_error(L);
}

static void spend(moon_budget *b, int64_t steps) {
    if (b->instructions_left > 0) b->instructions_left = b->instructions_left > steps ? b->instructions_left - steps : 0;
}

// Runs every HOOK_INTERVAL instructions in every coroutine (they share the extraspace),
// and before every instruction once a limit has been hit.
static void count_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    moon_budget *b = moon_budget_of(L);
    int interval = lua_gethookcount(L);
    spend(b, interval);
    char message[96];
    int reason = limit_reached(b, message, sizeof message);
    if (reason) raise_stop(L, 0, reason, message);
    // The host rearmed the budget (or an effect's limit ended): back to the cheap rate.
    if (interval != HOOK_INTERVAL) lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_INTERVAL);
}

// Ctrl-C during a long Swift call (an export it cancelled) stops the script as soon as the
// call returns, not at the next hook.
static void raise_if_interrupted(lua_State *L) {
    moon_budget *b = moon_budget_of(L);
    if (b->interrupt && __atomic_load_n(b->interrupt, __ATOMIC_SEQ_CST)) raise_stop(L, 1, MOON_STOP_INTERRUPTED, "interrupted");
}

void moon_install_hook(lua_State *L) { lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_INTERVAL); }

void moon_charge(lua_State *L, int64_t steps) {
    moon_budget *b = moon_budget_of(L);
    spend(b, steps);
    char message[96];
    int reason = limit_reached(b, message, sizeof message);
    if (reason) raise_stop(L, 1, reason, message);
}

int moon_msghandler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        // Calling __tostring here could loop forever: describe the object by type instead,
        // positioned at the script line that raised it.
        const char *type = luaL_getmetafield(L, 1, "__name") == LUA_TSTRING ? lua_tostring(L, -1)
                                                                             : luaL_typename(L, 1);
        push_script_where(L);
        msg = lua_pushfstring(L, "%s(error object is a %s value)", lua_tostring(L, -1), type);
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}
