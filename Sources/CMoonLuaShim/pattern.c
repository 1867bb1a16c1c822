// string.find, string.match, string.gmatch and string.gsub with a matcher that counts its
// steps. Lua's own matcher runs inside one C call, where the count hook never fires, so a
// pattern such as ("a"):rep(30000):find(".-.-.-.-.-.-b") would run for hours past any
// limit. This one charges its work to the state's budget every STEP_BATCH steps
// (moon_charge), so time, instruction and interrupt limits stop it like any loop.
//
// Behaviour (pattern syntax, captures, init/plain/anchor rules, gsub replacements, error
// messages) follows Lua 5.4's reference manual §6.4.1 and its lstrlib.c, from which the
// algorithm is derived:
//
// Copyright (C) 1994-2022 Lua.org, PUC-Rio.
// Permission is hereby granted, free of charge, to any person obtaining a copy of this
// software and associated documentation files (the "Software"), to deal in the Software
// without restriction, including without limitation the rights to use, copy, modify, merge,
// publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
// to whom the Software is furnished to do so, subject to the following conditions:
// The above copyright notice and this permission notice shall be included in all copies or
// substantial portions of the Software.
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
// INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
// PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
// FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
// OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
// DEALINGS IN THE SOFTWARE.
#include "internal.h"
#include <ctype.h>
#include <string.h>

#define ESCAPE '%'
#define SPECIALS "^$*+?.([%-"
#define MAX_CAPTURES 32          // as Lua's LUA_MAXCAPTURES
#define MAX_DEPTH 200            // recursion depth of one match ("pattern too complex")
#define STEP_BATCH 4096          // steps between budget checks
#define CAPTURE_OPEN (-1)
#define CAPTURE_POSITION (-2)

typedef struct Matcher {
    lua_State *L;
    const char *source, *source_end;
    const char *pattern_end;
    int depth_left;
    unsigned steps;
    int level;                   // captures in use
    struct { const char *start; ptrdiff_t length; } capture[MAX_CAPTURES];
} Matcher;

static void step(Matcher *m) {
    if (++m->steps == STEP_BATCH) {
        m->steps = 0;
        moon_charge(m->L, STEP_BATCH);
    }
}

static void reset(Matcher *m) {
    m->level = 0;
    m->depth_left = MAX_DEPTH;
}

static void prepare(Matcher *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    m->L = L;
    m->source = s;
    m->source_end = s + ls;
    m->pattern_end = p + lp;
    m->steps = 0;
    reset(m);
}

static const char *match(Matcher *m, const char *s, const char *p);

// The end of the single-character class that starts at p.
static const char *class_end(Matcher *m, const char *p) {
    switch (*p++) {
    case ESCAPE:
        if (p == m->pattern_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    case '[':
        if (*p == '^') p++;
        do {
            if (p == m->pattern_end) luaL_error(m->L, "malformed pattern (missing ']')");
            if (*(p++) == ESCAPE && p < m->pattern_end) p++;
        } while (*p != ']');
        return p + 1;
    default:
        return p;
    }
}

static int in_class(int c, int class) {
    int result;
    switch (tolower(class)) {
    case 'a': result = isalpha(c); break;
    case 'c': result = iscntrl(c); break;
    case 'd': result = isdigit(c); break;
    case 'g': result = isgraph(c); break;
    case 'l': result = islower(c); break;
    case 'p': result = ispunct(c); break;
    case 's': result = isspace(c); break;
    case 'u': result = isupper(c); break;
    case 'w': result = isalnum(c); break;
    case 'x': result = isxdigit(c); break;
    case 'z': result = c == 0; break;  // deprecated in Lua 5.2, still accepted by 5.4
    default: return class == c;
    }
    return isupper(class) ? !result : result;
}

// `p` is at '[' and `last` at the closing ']'.
static int in_set(int c, const char *p, const char *last) {
    int found = 1;
    if (*(p + 1) == '^') {
        found = 0;
        p++;
    }
    while (++p < last) {
        if (*p == ESCAPE) {
            p++;
            if (in_class(c, (unsigned char)*p)) return found;
        } else if (*(p + 1) == '-' && p + 2 < last) {
            p += 2;
            if ((unsigned char)*(p - 2) <= c && c <= (unsigned char)*p) return found;
        } else if ((unsigned char)*p == c) {
            return found;
        }
    }
    return !found;
}

static int single_match(Matcher *m, const char *s, const char *p, const char *ep) {
    if (s >= m->source_end) return 0;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case ESCAPE: return in_class(c, (unsigned char)*(p + 1));
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *match_balance(Matcher *m, const char *s, const char *p) {
    if (p >= m->pattern_end - 1) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= m->source_end || *s != *p) return NULL;
    int open = *p, close = *(p + 1), depth = 1;
    while (++s < m->source_end) {
        step(m);
        if (*s == close) {
            if (--depth == 0) return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

static const char *max_expand(Matcher *m, const char *s, const char *p, const char *ep) {
    ptrdiff_t count = 0;
    while (single_match(m, s + count, p, ep)) {
        step(m);
        count++;
    }
    for (; count >= 0; count--) {
        const char *result = match(m, s + count, ep + 1);
        if (result) return result;
    }
    return NULL;
}

static const char *min_expand(Matcher *m, const char *s, const char *p, const char *ep) {
    for (;;) {
        const char *result = match(m, s, ep + 1);
        if (result) return result;
        if (!single_match(m, s, p, ep)) return NULL;
        s++;
    }
}

static const char *start_capture(Matcher *m, const char *s, const char *p, ptrdiff_t what) {
    if (m->level >= MAX_CAPTURES) luaL_error(m->L, "too many captures");
    m->capture[m->level].start = s;
    m->capture[m->level].length = what;
    m->level++;
    const char *result = match(m, s, p);
    if (!result) m->level--;
    return result;
}

static const char *end_capture(Matcher *m, const char *s, const char *p) {
    int open = m->level - 1;
    while (open >= 0 && m->capture[open].length != CAPTURE_OPEN) open--;
    if (open < 0) luaL_error(m->L, "invalid pattern capture");
    m->capture[open].length = s - m->capture[open].start;
    const char *result = match(m, s, p);
    if (!result) m->capture[open].length = CAPTURE_OPEN;
    return result;
}

static int capture_index(Matcher *m, int digit) {
    int index = digit - '1';
    if (index < 0 || index >= m->level || m->capture[index].length == CAPTURE_OPEN)
        return luaL_error(m->L, "invalid capture index %%%d", index + 1);
    return index;
}

static const char *match_back_reference(Matcher *m, const char *s, int digit) {
    int index = capture_index(m, digit);
    size_t length = (size_t)m->capture[index].length;
    if ((size_t)(m->source_end - s) >= length && memcmp(m->capture[index].start, s, length) == 0)
        return s + length;
    return NULL;
}

static const char *match(Matcher *m, const char *s, const char *p) {
    if (m->depth_left-- == 0) luaL_error(m->L, "pattern too complex");
    while (p != m->pattern_end) {
        step(m);
        const char *ep;
        switch (*p) {
        case '(':
            s = *(p + 1) == ')' ? start_capture(m, s, p + 2, CAPTURE_POSITION)
                                : start_capture(m, s, p + 1, CAPTURE_OPEN);
            goto done;
        case ')':
            s = end_capture(m, s, p + 1);
            goto done;
        case '$':
            if (p + 1 != m->pattern_end) break;
            s = s == m->source_end ? s : NULL;
            goto done;
        case ESCAPE:
            if (*(p + 1) == 'b') {
                s = match_balance(m, s, p + 2);
                if (!s) goto done;
                p += 4;
                continue;
            }
            if (*(p + 1) == 'f') {
                p += 2;
                if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
                ep = class_end(m, p);
                int previous = s == m->source ? '\0' : (unsigned char)*(s - 1);
                int current = s < m->source_end ? (unsigned char)*s : '\0';
                if (!in_set(previous, p, ep - 1) && in_set(current, p, ep - 1)) {
                    p = ep;
                    continue;
                }
                s = NULL;
                goto done;
            }
            if (isdigit((unsigned char)*(p + 1))) {
                s = match_back_reference(m, s, (unsigned char)*(p + 1));
                if (!s) goto done;
                p += 2;
                continue;
            }
            break;
        }
        // A single-character class, possibly followed by a repetition.
        ep = class_end(m, p);
        if (!single_match(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') {
                p = ep + 1;
                continue;
            }
            s = NULL;
            goto done;
        }
        switch (*ep) {
        case '?': {
            const char *result = match(m, s + 1, ep + 1);
            if (result) {
                s = result;
                goto done;
            }
            p = ep + 1;
            continue;
        }
        case '+': s = max_expand(m, s + 1, p, ep); goto done;
        case '*': s = max_expand(m, s, p, ep); goto done;
        case '-': s = min_expand(m, s, p, ep); goto done;
        default:
            s++;
            p = ep;
            continue;
        }
    }
done:
    m->depth_left++;
    return s;
}

// MARK: Captures

// Returns the length of capture `i` and sets *start; for a position capture pushes the
// position and returns CAPTURE_POSITION. With no captures, capture 0 is the whole match.
static ptrdiff_t get_capture(Matcher *m, int i, const char *s, const char *e, const char **start) {
    if (i >= m->level) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *start = s;
        return e - s;
    }
    ptrdiff_t length = m->capture[i].length;
    *start = m->capture[i].start;
    if (length == CAPTURE_OPEN) luaL_error(m->L, "unfinished capture");
    if (length == CAPTURE_POSITION) lua_pushinteger(m->L, (m->capture[i].start - m->source) + 1);
    return length;
}

static void push_capture(Matcher *m, int i, const char *s, const char *e) {
    const char *start;
    ptrdiff_t length = get_capture(m, i, s, e, &start);
    if (length != CAPTURE_POSITION) lua_pushlstring(m->L, start, (size_t)length);
}

static int push_captures(Matcher *m, const char *s, const char *e) {
    int count = (m->level == 0 && s) ? 1 : m->level;
    luaL_checkstack(m->L, count, "too many captures");
    for (int i = 0; i < count; i++) push_capture(m, i, s, e);
    return count;
}

// MARK: find and match

static int has_specials(const char *p, size_t length) {
    size_t offset = 0;
    do {  // strpbrk stops at NULs, so look at each NUL-separated piece
        if (strpbrk(p + offset, SPECIALS)) return 1;
        offset += strlen(p + offset) + 1;
    } while (offset <= length);
    return 0;
}

// memmem that charges its work: a plain find can also take quadratic time.
static const char *find_plain(lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    if (lp == 0) return s;
    if (lp > ls) return NULL;
    const char *end = s + (ls - lp) + 1;
    int64_t cost = 1 + (int64_t)(lp >> 6);  // memcmp runs at many bytes per step
    int64_t owed = 0;
    while (s < end) {
        const char *candidate = memchr(s, *p, (size_t)(end - s));
        if (!candidate) return NULL;
        if (memcmp(candidate + 1, p + 1, lp - 1) == 0) return candidate;
        s = candidate + 1;
        if ((owed += cost) >= STEP_BATCH) {
            moon_charge(L, owed);
            owed = 0;
        }
    }
    return NULL;
}

// A 1-based (or negative, from the end) start position as an offset in 0...length.
static size_t start_offset(lua_Integer position, size_t length) {
    if (position > 0) return (size_t)position - 1;
    if (position == 0 || position < -(lua_Integer)length) return 0;
    return length + (size_t)position;
}

static int find_or_match(lua_State *L, int find) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t offset = start_offset(luaL_optinteger(L, 3, 1), ls);
    if (offset > ls) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        const char *found = find_plain(L, s + offset, ls - offset, p, lp);
        if (found) {
            lua_pushinteger(L, (found - s) + 1);
            lua_pushinteger(L, (lua_Integer)((found - s) + lp));
            return 2;
        }
    } else {
        Matcher m;
        const char *start = s + offset;
        int anchor = *p == '^';
        if (anchor) {
            p++;
            lp--;
        }
        prepare(&m, L, s, ls, p, lp);
        do {
            reset(&m);
            const char *end = match(&m, start, p);
            if (end) {
                if (!find) return push_captures(&m, start, end);
                lua_pushinteger(L, (start - s) + 1);
                lua_pushinteger(L, end - s);
                return push_captures(&m, NULL, NULL) + 2;
            }
        } while (start++ < m.source_end && !anchor);
    }
    luaL_pushfail(L);
    return 1;
}

int moon_str_find(lua_State *L) { return find_or_match(L, 1); }
int moon_str_match(lua_State *L) { return find_or_match(L, 0); }

// MARK: gmatch

typedef struct GmatchState {
    const char *next;            // where the next search starts
    const char *last_match;      // end of the last match (an empty match may not repeat there)
    Matcher m;
} GmatchState;

static int gmatch_next(lua_State *L) {
    GmatchState *state = lua_touserdata(L, lua_upvalueindex(3));
    state->m.L = L;  // the iterator may be resumed from another coroutine
    for (const char *s = state->next; s <= state->m.source_end; s++) {
        reset(&state->m);
        const char *end = match(&state->m, s, lua_tostring(L, lua_upvalueindex(2)));
        if (end && end != state->last_match) {
            state->next = state->last_match = end;
            return push_captures(&state->m, s, end);
        }
    }
    return 0;
}

int moon_str_gmatch(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t offset = start_offset(luaL_optinteger(L, 3, 1), ls);
    lua_settop(L, 2);  // the string and pattern stay alive as upvalues 1 and 2
    GmatchState *state = lua_newuserdatauv(L, sizeof *state, 0);
    if (offset > ls) offset = ls + 1;  // start past the end: no matches
    prepare(&state->m, L, s, ls, p, lp);
    state->next = s + offset;
    state->last_match = NULL;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

// MARK: gsub

static void append_template(Matcher *m, luaL_Buffer *b, const char *s, const char *e) {
    size_t length;
    const char *text = lua_tolstring(m->L, 3, &length);
    const char *escape;
    while ((escape = memchr(text, ESCAPE, length)) != NULL) {
        luaL_addlstring(b, text, (size_t)(escape - text));
        escape++;
        if (*escape == ESCAPE) {
            luaL_addchar(b, *escape);
        } else if (*escape == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit((unsigned char)*escape)) {
            const char *start;
            ptrdiff_t capture = get_capture(m, *escape - '1', s, e, &start);
            if (capture == CAPTURE_POSITION) luaL_addvalue(b);
            else luaL_addlstring(b, start, (size_t)capture);
        } else {
            luaL_error(m->L, "invalid use of '%c' in replacement string", ESCAPE);
        }
        length -= (size_t)(escape + 1 - text);
        text = escape + 1;
    }
    luaL_addlstring(b, text, length);
}

// Appends the replacement for the match s...e; returns whether it changed anything.
static int append_replacement(Matcher *m, luaL_Buffer *b, const char *s, const char *e, int kind) {
    lua_State *L = m->L;
    if (kind == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int count = push_captures(m, s, e);
        lua_call(L, count, 1);
    } else if (kind == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        append_template(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

int moon_str_gsub(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *last_match = NULL;
    int kind = lua_type(L, 3);
    lua_Integer max_replacements = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    int anchor = *p == '^';
    lua_Integer count = 0;
    int changed = 0;
    luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE,
                     3, "string/function/table");
    if (anchor) {
        p++;
        lp--;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    Matcher m;
    prepare(&m, L, s, ls, p, lp);
    while (count < max_replacements) {
        reset(&m);
        const char *end = match(&m, s, p);
        if (end && end != last_match) {
            count++;
            changed = append_replacement(&m, &b, s, end, kind) | changed;
            s = last_match = end;
        } else if (s < m.source_end) {
            luaL_addchar(&b, *s++);
        } else {
            break;
        }
        if (anchor) break;
    }
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, s, (size_t)(m.source_end - s));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, count);
    return 2;
}
