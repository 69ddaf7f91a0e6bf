/*
 * query_parse.c — the predicate language, parsed into q_node trees against a table's schema.
 *
 *   query      := or-expr suffix*
 *   or-expr    := and-expr (("OR" | "||") and-expr)*
 *   and-expr   := unary (("AND" | "&&") unary)*
 *   unary      := ("NOT" | "!") unary | "(" or-expr ")" | "TRUEPREDICATE" | "FALSEPREDICATE"
 *               | comparison
 *   comparison := ["ANY" | "SOME" | "ALL" | "NONE"] operand op operand   (a constant on either
 *                 side; two key paths compare per object; list.@agg.property over links)
 *               | operand "BETWEEN" "{" operand "," operand "}"
 *               | operand "IN" ( "{" operand, ... "}" | argument )
 *               | path "GEOWITHIN" ( argument | geoBox(...) | geoCircle(...) | geoPolygon(...) )
 *               | path "TEXT" ( string | argument )   (words: query/fulltext.c)
 *   op         := "==" | "=" | "!=" | "<>" | "<" | "<=" | ">" | ">=" | "BEGINSWITH" | "ENDSWITH"
 *               | "CONTAINS" | "LIKE", each optionally followed by "[c]", "[d]" or "[cd]"
 *   operand    := keypath ["." ("@count" | "@size" | "@sum" | "@avg" | "@min" | "@max")]
 *               | "SUBQUERY" "(" keypath "," "$"name "," or-expr ")" "." "@count"
 *               | literal | "$" digits | "%@"
 *   keypath    := step ("." step)*;  step := property [map] | "@links" "." Table "." property
 *   map        := (after a map property) "[" (string | "$" digits | "%@") "]" (one key's value,
 *                 null when absent) | "." ("@keys" | "@allKeys") | "." ("@values" | "@allValues")
 *               (inside a SUBQUERY, a keypath may start with its $name; without it, it is read
 *               from the element all the same)
 *   literal    := 'string' | "string" | number | 0x<hex> | [+-]inf | [+-]infinity | nan | true
 *               | false | nil | null | T<seconds>:<nanoseconds> (one sign)
 *               | Y-M-D[@|T H:M:S[:nanoseconds | .fraction]] | oid(24 hex) | uuid(8-4-4-4-12)
 *   property   := letters, digits, '_', any non-ASCII character, '-' between them
 *   suffix     := "SORT" "(" keypath ["ASC" | "DESC"], ... ")" | "DISTINCT" "(" keypath, ... ")"
 *               | "LIMIT" "(" integer ")"
 *
 * Keywords are case-insensitive. Errors give the 1-based column and what was expected there;
 * unknown properties name the table and the property; a constant of the wrong type names both
 * types. Paths follow links and lists of links (ANY by default).
 */
#include "query/query.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>

typedef enum tok_kind {
    T_END, T_IDENT, T_STRING, T_INT, T_FLOAT, T_ARG, T_TIMESTAMP, T_OP, T_LPAREN, T_RPAREN,
    T_LBRACE, T_RBRACE, T_COMMA, T_DOT, T_FLAGS, T_OID, T_UUID, T_LBRACKET, T_RBRACKET
} tok_kind;

typedef struct token {
    tok_kind kind;
    const char *p;           /* start in the text */
    size_t len;
    int column;
    /* decoded */
    char *str;               /* T_STRING: unescaped bytes (owned by the query) */
    size_t slen;
    int64_t i;
    double d;
    int64_t secs;
    int32_t nanos;
    uint8_t bytes[16];
    unsigned flags;          /* T_FLAGS */
} token;

typedef struct parser {
    strata_txn_t *txn;
    st_store *store;
    const strata_name_map_t *names; /* public names of properties (name_map.c), or NULL */
    strata_query_t *q;
    const char *text;
    token tok;
    int next_arg;            /* for %@ */
    const char *var;         /* the innermost SUBQUERY's variable ("$d"), or NULL */
    size_t var_len;
    strata_table_t *var_table;
    strata_error *err;
    int rc;
    int depth;               /* parentheses, NOT and SUBQUERY open around the token */
} parser;

static int perr(parser *ps, int column, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(parser *ps, int column, const char *fmt, ...) {
    if (ps->rc) return ps->rc;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    st_utf8_trim(msg, sizeof msg);
    ps->rc = st_err(ps->err, STRATA_ERR_INVALID_ARGUMENT, "query on '%s', column %d: %s",
                    ps->q->table, column, msg);
    return ps->rc;
}

/* The query takes p (malloc'd) and frees it with itself; false (p freed) when out of memory. */
static bool keep(parser *ps, void *p) {
    strata_query_t *q = ps->q;
    if (q->nowned == q->capowned) {
        size_t cap = q->capowned ? 2 * q->capowned : 16;
        void **g = realloc(q->owned, cap * sizeof *g);
        if (!g) return free(p), false;
        q->owned = g;
        q->capowned = cap;
    }
    q->owned[q->nowned++] = p;
    return true;
}

static void *own(parser *ps, size_t size) {
    void *p = calloc(1, size ? size : 1);
    return p && keep(ps, p) ? p : NULL;
}

/* One more level of nesting at column col: false (with the error) past Q_MAX_DEPTH. */
static bool nest(parser *ps, int col) {
    if (++ps->depth <= Q_MAX_DEPTH) return true;
    perr(ps, col, "nested more than %d levels deep (parentheses, NOT, SUBQUERY)", Q_MAX_DEPTH);
    return false;
}

/* ------------------------------------------------------------------ lexer */

static bool word_is(const token *t, const char *w) {
    size_t n = strlen(w);
    if (t->kind != T_IDENT || t->len != n) return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)t->p[i]) != tolower((unsigned char)w[i])) return false;
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void put_utf8(char *o, size_t *n, uint32_t cp) {
    if (cp < 0x80) o[(*n)++] = (char)cp;
    else if (cp < 0x800) o[(*n)++] = (char)(0xC0 | cp >> 6), o[(*n)++] = (char)(0x80 | (cp & 0x3F));
    else {
        o[(*n)++] = (char)(0xE0 | cp >> 12);
        o[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[(*n)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static int lex_string(parser *ps, const char *s, int col) {
    char quote = *s++;
    /* Room for the literal only (an escape never grows: \uXXXX is at most 3 bytes), not for the
     * rest of the query: sized by the rest, 50,000 literals took 1.3 s and 500 MB to compile. */
    size_t span = 0;
    while (s[span] && s[span] != quote) span += s[span] == '\\' && s[span + 1] ? 2 : 1;
    char *out = own(ps, span + 1);
    if (!out) return perr(ps, col, "out of memory");
    size_t n = 0;
    while (*s && *s != quote) {
        if (*s != '\\') {
            out[n++] = *s++;
            continue;
        }
        s++;
        switch (*s) {
        case 'n': out[n++] = '\n'; s++; break;
        case 't': out[n++] = '\t'; s++; break;
        case 'r': out[n++] = '\r'; s++; break;
        case '0': out[n++] = '\0'; s++; break;
        case '\\': case '\'': case '"': out[n++] = *s++; break;
        case 'u': {
            uint32_t cp = 0;
            for (int i = 1; i <= 4; i++) {
                int h = hexval(s[i]);
                if (h < 0) return perr(ps, col + (int)(s - ps->tok.p) + i, "expected 4 hex digits after \\u");
                cp = cp << 4 | (uint32_t)h;
            }
            put_utf8(out, &n, cp);
            s += 5;
            break;
        }
        default:
            return perr(ps, col, "unknown escape '\\%c' in a string", *s ? *s : ' ');
        }
    }
    if (*s != quote) return perr(ps, col, "unterminated string: expected a closing %c", quote);
    ps->tok.kind = T_STRING;
    ps->tok.str = out;
    ps->tok.slen = n;
    ps->tok.len = (size_t)(s + 1 - ps->tok.p);
    return STRATA_OK;
}

/* The bytes of the UTF-8 character at s (1 for a stray byte), for messages. */
static int utf8_char_len(const char *s) {
    unsigned char c = (unsigned char)*s;
    int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    for (int i = 1; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) return 1;
    return n;
}

/* A byte that continues an identifier: a letter, digit, '_', or part of a non-ASCII character. */
static bool ident_byte(char c) {
    return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) { /* Howard Hinnant's */
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int lex(parser *ps) {
    const char *s = ps->tok.p + ps->tok.len;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    token *t = &ps->tok;
    memset(t, 0, sizeof *t);
    t->p = s;
    t->column = (int)(s - ps->text) + 1;
    int col = t->column;
    char c = *s;
    if (!c) return t->kind = T_END, STRATA_OK;
    t->len = 1;
    switch (c) {
    case '(': t->kind = T_LPAREN; return STRATA_OK;
    case ')': t->kind = T_RPAREN; return STRATA_OK;
    case '{': t->kind = T_LBRACE; return STRATA_OK;
    case '}': t->kind = T_RBRACE; return STRATA_OK;
    case ',': t->kind = T_COMMA; return STRATA_OK;
    case '.': if (!isdigit((unsigned char)s[1])) { t->kind = T_DOT; return STRATA_OK; } break;
    case '\'': case '"': return lex_string(ps, s, col);
    case ']': t->kind = T_RBRACKET; return STRATA_OK;
    case '[': {
        if (s[1] == '\'' || s[1] == '"' || s[1] == '$' || s[1] == '%' || /* map['key'], map[$0] */
            isdigit((unsigned char)s[1]) || s[1] == '-' || s[1] == '+' || s[1] == '.' || s[1] == ' ') { /* [lng, lat] */
            t->kind = T_LBRACKET;
            return STRATA_OK;
        }
        unsigned f = 0;
        size_t i = 1;
        for (; s[i] && s[i] != ']'; i++) {
            if (s[i] == 'c' || s[i] == 'C') f |= QF_CASE;
            else if (s[i] == 'd' || s[i] == 'D') f |= QF_DIACRITIC;
            else return perr(ps, col + (int)i, "expected 'c' or 'd' in a [flags] modifier");
        }
        if (s[i] != ']' || i == 1) return perr(ps, col, "expected a modifier like [c], [d] or [cd]");
        t->kind = T_FLAGS;
        t->flags = f;
        t->len = i + 1;
        return STRATA_OK;
    }
    case '$':
        if (isalpha((unsigned char)s[1]) || s[1] == '_') { /* a SUBQUERY variable */
            size_t i = 1;
            while (isalnum((unsigned char)s[i]) || s[i] == '_') i++;
            t->kind = T_IDENT;
            t->len = i;
            return STRATA_OK;
        }
        if (isdigit((unsigned char)s[1])) {
            size_t i = 1;
            int64_t v = 0;
            while (isdigit((unsigned char)s[i]) && v < 100000) v = v * 10 + (s[i++] - '0');
            t->kind = T_ARG;
            t->i = v;
            t->len = i;
            return STRATA_OK;
        }
        break;
    case '%':
        if (s[1] == '@') {
            t->kind = T_ARG;
            t->i = -1;
            t->len = 2;
            return STRATA_OK;
        }
        break;
    }
    /* operators */
    static const char *const ops[] = {"==", "!=", "<>", "<=", ">=", "&&", "||", "=", "<", ">", "!"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        size_t n = strlen(ops[i]);
        if (strncmp(s, ops[i], n) == 0) {
            t->kind = T_OP;
            t->len = n;
            return STRATA_OK;
        }
    }
    /* inf, infinity, nan (any case, with a sign) */
    {
        size_t sign = (c == '-' || c == '+') ? 1 : 0;
        static const char *const words[] = {"infinity", "inf", "nan"};
        for (size_t w = 0; w < 3; w++) {
            size_t n = strlen(words[w]);
            if (strncasecmp(s + sign, words[w], n) == 0 && !ident_byte(s[sign + n])) {
                t->kind = T_FLOAT;
                t->d = w == 2 ? NAN : (c == '-' ? -INFINITY : INFINITY);
                t->len = sign + n;
                return STRATA_OK;
            }
        }
    }
    /* timestamps: T<secs>:<nanos> */
    if (c == 'T' && (isdigit((unsigned char)s[1]) || (s[1] == '-' && isdigit((unsigned char)s[2])))) {
        char *end;
        long long secs = strtoll(s + 1, &end, 10);
        if (*end == ':') {
            char *end2;
            long nanos = strtol(end + 1, &end2, 10);
            if (end2 == end + 1 || nanos <= -1000000000L || nanos >= 1000000000L)
                return perr(ps, col, "expected nanoseconds (0..999999999) after ':' in a timestamp");
            if ((secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) ||
                (secs == 0 && s[1] == '-' && nanos > 0))
                return perr(ps, col, "the seconds and nanoseconds of a timestamp have different "
                            "signs");
            t->kind = T_TIMESTAMP;
            t->secs = secs;
            t->nanos = (int32_t)nanos;
            t->len = (size_t)(end2 - s);
            return STRATA_OK;
        }
    }
    /* numbers and dates */
    if (isdigit((unsigned char)c) || ((c == '-' || c == '+' || c == '.') &&
                                      (isdigit((unsigned char)s[1]) || s[1] == '.'))) {
        unsigned y, mo, d, h = 0, mi = 0;
        double sec = 0;
        int n = 0;
        /* sscanf measures the string it reads: give it the token's first bytes, not the rest
         * of the query (which made compiling a long query quadratic) */
        char head[64];
        size_t hl = strnlen(s, sizeof head - 1);
        memcpy(head, s, hl);
        head[hl] = 0;
        /* YYYY-M-D, then @ or T and H:M:S, then :nanoseconds or .fraction (no padding needed) */
        if (isdigit((unsigned char)c) && sscanf(head, "%4u-%2u-%2u%n", &y, &mo, &d, &n) == 3 &&
            n >= 8 && !isdigit((unsigned char)head[n])) {
            size_t len = (size_t)n;
            int64_t nanos = 0;
            if (s[len] == '@' || s[len] == 'T') {
                int n2 = 0;
                unsigned whole_sec;
                if (sscanf(head + len + 1, "%2u:%2u:%2u%n", &h, &mi, &whole_sec, &n2) != 3)
                    return perr(ps, col + (int)len + 1, "expected H:M:S after '%c' in a date", s[len]);
                sec = whole_sec;
                len += 1 + (size_t)n2;
                if (s[len] == ':' || s[len] == '.') { /* nanoseconds, or a fraction of a second */
                    size_t k = len + 1, digits = 0;
                    int64_t v = 0;
                    for (; isdigit((unsigned char)s[k]) && digits < 9; k++, digits++) v = v * 10 + (s[k] - '0');
                    if (!digits || isdigit((unsigned char)s[k]))
                        return perr(ps, col + (int)len + 1, "expected 1 to 9 digits of %s in a date",
                                    s[len] == ':' ? "nanoseconds" : "a second's fraction");
                    if (s[len] == '.') for (; digits < 9; digits++) v *= 10;
                    nanos = v;
                    len = k;
                }
            }
            if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec < 0 || sec >= 61)
                return perr(ps, col, "'%.*s' is not a valid date", (int)len, s);
            t->kind = T_TIMESTAMP;
            t->secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + (int64_t)sec;
            t->nanos = (int32_t)nanos;
            t->len = len;
            if (ident_byte(s[len]))
                return perr(ps, col, "unexpected '%.*s' after a date", utf8_char_len(s + len), s + len);
            return STRATA_OK;
        }
        /* hexadecimal integers: 0x1F, -0x10 */
        size_t sign = (c == '-' || c == '+') ? 1 : 0;
        if (s[sign] == '0' && (s[sign + 1] == 'x' || s[sign + 1] == 'X') && hexval(s[sign + 2]) >= 0) {
            char *end;
            errno = 0;
            unsigned long long u = strtoull(s + sign + 2, &end, 16);
            if (errno || u > (unsigned long long)INT64_MAX + (c == '-'))
                return perr(ps, col, "'%.*s' does not fit in 64 bits", (int)(end - s), s);
            t->kind = T_INT;
            t->i = c == '-' ? (int64_t)(0 - u) : (int64_t)u;
            t->len = (size_t)(end - s);
            if (ident_byte(*end))
                return perr(ps, col, "unexpected '%.*s' after a number", utf8_char_len(end), end);
            return STRATA_OK;
        }
        char *end;
        errno = 0;
        long long iv = strtoll(s, &end, 10);
        if (*end == '.' || *end == 'e' || *end == 'E' || errno) {
            t->d = strtod(s, &end);
            t->kind = T_FLOAT;
        } else {
            t->i = iv;
            t->kind = T_INT;
        }
        t->len = (size_t)(end - s);
        if (ident_byte(*end))
            return perr(ps, col, "unexpected '%.*s' after a number", utf8_char_len(end), end);
        return STRATA_OK;
    }
    if (isalpha((unsigned char)c) || c == '_' || c == '@' || (unsigned char)c >= 0x80) {
        size_t i = 1;
        /* letters, digits, '_', any non-ASCII character (UTF-8 bytes), and '-' between them */
        while (ident_byte(s[i]) || (s[i] == '-' && ident_byte(s[i + 1]))) i++;
        t->kind = T_IDENT;
        t->len = i;
        /* oid(...) and uuid(...) */
        if ((word_is(t, "oid") || word_is(t, "uuid")) && s[i] == '(') {
            bool is_uuid = word_is(t, "uuid");
            const char *e = strchr(s + i, ')');
            if (!e) return perr(ps, col, "expected ')' to close %s(", is_uuid ? "uuid" : "oid");
            size_t nb = 0, want = is_uuid ? 16 : 12;
            for (const char *h = s + i + 1; h < e; h++) {
                if (*h == '-' && is_uuid) continue;
                int hi = hexval(*h), lo = h + 1 < e ? hexval(h[1]) : -1;
                if (hi < 0 || lo < 0 || nb == want)
                    return perr(ps, (int)(h - ps->text) + 1, "expected %zu hex bytes in %s(...)",
                                want, is_uuid ? "uuid" : "oid");
                t->bytes[nb++] = (uint8_t)(hi << 4 | lo);
                h++;
            }
            if (nb != want)
                return perr(ps, col, "%s(...) needs %zu bytes, got %zu", is_uuid ? "uuid" : "oid",
                            want, nb);
            t->kind = is_uuid ? T_UUID : T_OID;
            t->len = (size_t)(e + 1 - s);
        }
        return STRATA_OK;
    }
    return perr(ps, col, "unexpected character '%.*s'", utf8_char_len(s), s);
}

static bool is_op(const token *t, const char *op) {
    return t->kind == T_OP && t->len == strlen(op) && strncmp(t->p, op, t->len) == 0;
}

static int expect(parser *ps, tok_kind k, const char *what) {
    if (ps->tok.kind != k) return perr(ps, ps->tok.column, "expected %s", what);
    return lex(ps);
}

/* ------------------------------------------------------------------ paths */

static strata_table_t *table_of(parser *ps, uint32_t id) { return st_table_by_id(ps->store, id); }

/* The current token's text as a name (cut at STRATA_MAX_NAME + 1 bytes, never mid-character). */
static void tok_name(const parser *ps, char out[STRATA_MAX_NAME + 2]) {
    size_t n = ps->tok.len < STRATA_MAX_NAME + 1 ? ps->tok.len : STRATA_MAX_NAME + 1;
    memcpy(out, ps->tok.p, n);
    out[n] = 0;
    st_utf8_trim(out, STRATA_MAX_NAME + 2);
}

/* The property of t named name (a public name of the map first, then a column's), or NULL. */
static st_prop *prop_named(const parser *ps, strata_table_t *t, const char *name) {
    const char *column = st_name_map_column(ps->names, t->name, name);
    if (column) name = column;
    for (uint32_t i = 0; i < t->nprops; i++)
        if (strcmp(t->props[i].name, name) == 0) return &t->props[i];
    return NULL;
}

/* "table 'T' has no property 'p'" (and the column a public name stands for). */
static int no_prop(parser *ps, int column, strata_table_t *t, const char *name) {
    const char *mapped = st_name_map_column(ps->names, t->name, name);
    if (mapped)
        return perr(ps, column, "table '%s' has no property '%s' (the column '%s' stands for)",
                    t->name, mapped, name);
    return perr(ps, column, "table '%s' has no property '%s'", t->name, name);
}

/* After a map property: `['key']` or `[$n]` (one key's value), `.@keys` / `.@allKeys`, `.@values`
 * / `.@allValues` (the default). */
static int parse_map_selector(parser *ps, strata_table_t *t, const st_prop *p, q_step *st) {
    if (ps->tok.kind == T_LBRACKET) {
        if ((ps->rc = lex(ps))) return ps->rc;
        if (ps->tok.kind == T_ARG) {
            st->mkey_arg = ps->tok.i < 0 ? ps->next_arg++ : (int)ps->tok.i;
            if (st->mkey_arg + 1 > ps->q->nargs) ps->q->nargs = st->mkey_arg + 1;
        } else if (ps->tok.kind == T_STRING) {
            st->mkey = ps->tok.str;
            st->mkey_len = (uint32_t)ps->tok.slen;
        } else {
            return perr(ps, ps->tok.column, "expected a quoted key or an argument in %s.%s[...]",
                        t->name, p->name);
        }
        st->map = Q_MAP_KEY;
        if ((ps->rc = lex(ps)) || (ps->rc = expect(ps, T_RBRACKET, "']' after the key"))) return ps->rc;
        return STRATA_OK;
    }
    if (ps->tok.kind != T_DOT) return STRATA_OK;
    /* look past the dot without taking it unless it names @keys or @values */
    const char *after = ps->tok.p + 1;
    while (*after == ' ') after++;
    bool keys = (strncmp(after, "@keys", 5) == 0 && !isalnum((unsigned char)after[5])) ||
                (strncmp(after, "@allKeys", 8) == 0 && !isalnum((unsigned char)after[8]));
    bool values = (strncmp(after, "@values", 7) == 0 && !isalnum((unsigned char)after[7])) ||
                  (strncmp(after, "@allValues", 10) == 0 && !isalnum((unsigned char)after[10]));
    if (!keys && !values) return STRATA_OK;
    if ((ps->rc = lex(ps)) || (ps->rc = lex(ps))) return ps->rc;
    if (keys) st->map = Q_MAP_KEYS;
    return STRATA_OK;
}

/* keypath: ident ("." ident)*, resolved from table t; an aggregate suffix is allowed at the end
 * when allow_agg. */
static int parse_path(parser *ps, strata_table_t *t, q_step *steps, int *nsteps, q_agg *agg,
                      bool *agg_links, bool allow_agg) {
    *nsteps = 0;
    if (agg) *agg = QA_NONE;
    strata_table_t *cur = t;
    if (ps->var && ps->tok.kind == T_IDENT && ps->tok.len == ps->var_len &&
        memcmp(ps->tok.p, ps->var, ps->var_len) == 0) { /* $d.property inside SUBQUERY */
        cur = ps->var_table;
        if ((ps->rc = lex(ps))) return ps->rc;
        if (ps->tok.kind != T_DOT)
            return perr(ps, ps->tok.column, "expected '.' and a property after %.*s",
                        (int)ps->var_len, ps->var);
        if ((ps->rc = lex(ps))) return ps->rc;
    } else if (ps->var) { /* a key path without the variable: from the element too (NSPredicate's
                             * SUBQUERY in RealmSwift reads it so; a nested SUBQUERY's collection) */
        cur = ps->var_table;
    }
    for (;;) {
        if (ps->tok.kind != T_IDENT) return perr(ps, ps->tok.column, "expected a property name");
        int col = ps->tok.column;
        char name[STRATA_MAX_NAME + 2];
        tok_name(ps, name);
        if (name[0] == '@') {
            static const struct { const char *w; q_agg a; } aggs[] = {
                {"@count", QA_COUNT}, {"@size", QA_COUNT}, {"@sum", QA_SUM},
                {"@avg", QA_AVG}, {"@min", QA_MIN}, {"@max", QA_MAX}};
            q_agg a = QA_NONE;
            for (size_t i = 0; i < sizeof aggs / sizeof *aggs; i++)
                if (word_is(&ps->tok, aggs[i].w)) a = aggs[i].a;
            if (word_is(&ps->tok, "@links")) { /* @links.Table.property */
                if (*nsteps == Q_MAX_PATH)
                    return perr(ps, col, "a key path of more than %d steps", Q_MAX_PATH);
                if (!cur) return perr(ps, col, "@links follows a property that is not a link");
                if ((ps->rc = lex(ps)) || (ps->rc = expect(ps, T_DOT, "'.' after @links")))
                    return ps->rc;
                if (ps->tok.kind != T_IDENT) return perr(ps, ps->tok.column, "expected a table name after @links.");
                char tname[STRATA_MAX_NAME + 2];
                tok_name(ps, tname);
                strata_table_t *origin = st_table_by_name(ps->store, tname);
                if (!origin) return perr(ps, ps->tok.column, "no table named '%s'", tname);
                if ((ps->rc = lex(ps)) || (ps->rc = expect(ps, T_DOT, "'.' and a property")))
                    return ps->rc;
                if (ps->tok.kind != T_IDENT) return perr(ps, ps->tok.column, "expected a property of '%s'", tname);
                int pcol = ps->tok.column;
                char pname[STRATA_MAX_NAME + 2];
                tok_name(ps, pname);
                st_prop *lp = prop_named(ps, origin, pname);
                if (!lp) return no_prop(ps, pcol, origin, pname);
                if (lp->type != STRATA_TYPE_LINK || lp->target != cur->id)
                    return perr(ps, pcol, "'%s.%s' does not link to '%s'", tname, pname, cur->name);
                steps[(*nsteps)++] = (q_step){origin->id, lp->id, lp->type, lp->flags, true, Q_MAP_VALUES, 0, NULL, -1};
                cur = origin;
                if ((ps->rc = lex(ps))) return ps->rc;
                if (ps->tok.kind != T_DOT) break;
                if ((ps->rc = lex(ps))) return ps->rc;
                continue;
            }
            if (a == QA_NONE || !allow_agg || *nsteps == 0)
                return perr(ps, col, "unexpected '%s': expected a property name", name);
            const q_step *last = &steps[*nsteps - 1];
            bool list = q_step_many(last);
            bool text = q_step_type(last) == STRATA_TYPE_STRING || q_step_type(last) == STRATA_TYPE_BINARY;
            bool link = q_step_type(last) == STRATA_TYPE_LINK;
            if (a == QA_COUNT ? !(list || text || link) : !list)
                return perr(ps, col, "%s needs a list%s, and '%s' is not one", name,
                            a == QA_COUNT ? ", a string or a link" : "", table_of(ps, last->table) ?
                            st_prop_find(table_of(ps, last->table), last->col)->name : "?");
            *agg = a;
            if ((ps->rc = lex(ps))) return ps->rc;
            if (a != QA_COUNT && link) { /* dogs.@sum.age: a number of each linked object */
                if (*nsteps == Q_MAX_PATH)
                    return perr(ps, col, "a key path of more than %d steps", Q_MAX_PATH);
                if (ps->tok.kind != T_DOT)
                    return perr(ps, ps->tok.column, "expected '.' and a property after %s over "
                                "a list of links", name);
                if ((ps->rc = lex(ps))) return ps->rc;
                strata_table_t *target = last->back ? table_of(ps, last->table) : cur;
                if (ps->tok.kind != T_IDENT || ps->tok.p[0] == '@')
                    return perr(ps, ps->tok.column, "expected a property of '%s'", target->name);
                char pn[STRATA_MAX_NAME + 2];
                tok_name(ps, pn);
                st_prop *ep = prop_named(ps, target, pn);
                if (!ep) return no_prop(ps, ps->tok.column, target, pn);
                if ((ep->flags & STRATA_PROP_LIST) || !q_aggregable(a, (strata_type)ep->type))
                    return perr(ps, ps->tok.column, "%s needs numbers%s, and '%s.%s' is a %s", name,
                                a == QA_MIN || a == QA_MAX ? " or dates" : "",
                                target->name, pn, (ep->flags & STRATA_PROP_LIST) ? "list"
                                : st_type_name((strata_type)ep->type));
                steps[(*nsteps)++] = (q_step){target->id, ep->id, ep->type, ep->flags, false, Q_MAP_VALUES, 0, NULL, -1};
                if (agg_links) *agg_links = true;
                return lex(ps);
            }
            if (a != QA_COUNT && (last->back || !q_aggregable(a, q_step_type(last))))
                return perr(ps, col, "%s needs a list of numbers%s", name,
                            a == QA_MIN || a == QA_MAX ? " or dates" : "");
            return STRATA_OK;
        }
        if (*nsteps == Q_MAX_PATH) return perr(ps, col, "a key path of more than %d steps", Q_MAX_PATH);
        if (!cur) return perr(ps, col, "'%s' follows a property that is not a link", name);
        st_prop *p = prop_named(ps, cur, name);
        if (!p) return no_prop(ps, col, cur, name);
        q_step *st = &steps[(*nsteps)++];
        *st = (q_step){cur->id, p->id, p->type, p->flags, false, Q_MAP_VALUES, 0, NULL, -1};
        if ((ps->rc = lex(ps))) return ps->rc;
        if ((p->flags & STRATA_PROP_MAP) && (ps->rc = parse_map_selector(ps, cur, p, st))) return ps->rc;
        cur = p->type == STRATA_TYPE_LINK && st->map != Q_MAP_KEYS ? table_of(ps, p->target) : NULL;
        if (ps->tok.kind != T_DOT) break;
        if ((ps->rc = lex(ps))) return ps->rc;
    }
    return STRATA_OK;
}

/* ------------------------------------------------------------------ operands */

static int parse_operand(parser *ps, q_expr *e);

static int parse_constant(parser *ps, q_expr *e) {
    token *t = &ps->tok;
    e->column = t->column;
    e->kind = QE_CONST;
    strata_value *v = &e->value;
    switch (t->kind) {
    case T_STRING: v->type = STRATA_TYPE_STRING; v->u.bytes.data = t->str; v->u.bytes.len = t->slen; break;
    case T_INT: v->type = STRATA_TYPE_INT; v->u.i = t->i; break;
    case T_FLOAT: v->type = STRATA_TYPE_DOUBLE; v->u.d = t->d; break;
    case T_TIMESTAMP: v->type = STRATA_TYPE_TIMESTAMP; v->u.timestamp.seconds = t->secs; v->u.timestamp.nanoseconds = t->nanos; break;
    case T_OID: v->type = STRATA_TYPE_OBJECT_ID; memcpy(v->u.object_id, t->bytes, 12); break;
    case T_UUID: v->type = STRATA_TYPE_UUID; memcpy(v->u.uuid, t->bytes, 16); break;
    case T_ARG:
        e->kind = QE_ARG;
        e->arg = t->i < 0 ? ps->next_arg++ : (int)t->i;
        if (e->arg + 1 > ps->q->nargs) ps->q->nargs = e->arg + 1;
        break;
    case T_IDENT:
        if (word_is(t, "true") || word_is(t, "false")) {
            v->type = STRATA_TYPE_BOOL;
            v->u.b = word_is(t, "true");
        } else if (word_is(t, "nil") || word_is(t, "null")) {
            v->type = STRATA_TYPE_NULL;
        } else {
            return perr(ps, t->column, "expected a value");
        }
        break;
    default: return perr(ps, t->column, "expected a value");
    }
    return lex(ps);
}

static int parse_list(parser *ps, q_expr *e) {
    e->kind = QE_LIST;
    e->column = ps->tok.column;
    if ((ps->rc = lex(ps))) return ps->rc; /* { */
    q_expr items[64];
    int n = 0;
    if (ps->tok.kind != T_RBRACE)
        for (;;) {
            if (n == 64) return perr(ps, ps->tok.column, "a list of more than 64 values");
            memset(&items[n], 0, sizeof items[n]);
            if (parse_constant(ps, &items[n])) return ps->rc;
            n++;
            if (ps->tok.kind == T_COMMA) {
                if ((ps->rc = lex(ps))) return ps->rc;
                continue;
            }
            break;
        }
    if (ps->tok.kind != T_RBRACE) return perr(ps, ps->tok.column, "expected ',' or '}'");
    e->items = own(ps, (size_t)n * sizeof *items);
    if (!e->items) return perr(ps, e->column, "out of memory");
    memcpy(e->items, items, (size_t)n * sizeof *items);
    e->nitems = n;
    return lex(ps);
}

static q_node *parse_or(parser *ps);

/* SUBQUERY(collection, $name, predicate).@count */
static int parse_subquery(parser *ps, q_expr *e) {
    e->kind = QE_SUBQUERY;
    int col = ps->tok.column;
    if ((ps->rc = lex(ps)) || (ps->rc = expect(ps, T_LPAREN, "'(' after SUBQUERY"))) return ps->rc;
    strata_table_t *root = st_table_by_id(ps->store, ps->q->table_id);
    if (parse_path(ps, root, e->steps, &e->nsteps, NULL, NULL, false)) return ps->rc;
    const q_step *last = &e->steps[e->nsteps - 1];
    if (!q_step_many(last) || q_step_type(last) != STRATA_TYPE_LINK)
        return perr(ps, col, "SUBQUERY needs a list of links or @links as its collection");
    strata_table_t *elem = last->back ? st_table_by_id(ps->store, last->table)
                                      : st_table_by_id(ps->store, st_prop_find(st_table_by_id(ps->store, last->table), last->col)->target);
    if ((ps->rc = expect(ps, T_COMMA, "',' after the collection"))) return ps->rc;
    if (ps->tok.kind != T_IDENT || ps->tok.p[0] != '$')
        return perr(ps, ps->tok.column, "expected a variable like $d");
    const char *saved_var = ps->var;
    size_t saved_len = ps->var_len;
    strata_table_t *saved_table = ps->var_table;
    ps->var = ps->tok.p;
    ps->var_len = ps->tok.len;
    ps->var_table = elem;
    if ((ps->rc = lex(ps)) || (ps->rc = expect(ps, T_COMMA, "',' after the variable"))) return ps->rc;
    if (!nest(ps, col)) return ps->rc;
    e->sub = parse_or(ps);
    ps->depth--;
    ps->var = saved_var;
    ps->var_len = saved_len;
    ps->var_table = saved_table;
    if (!e->sub) return ps->rc;
    if ((ps->rc = expect(ps, T_RPAREN, "')' to close SUBQUERY"))) return ps->rc;
    if (ps->tok.kind != T_DOT) return perr(ps, ps->tok.column, "expected .@count after SUBQUERY(...)");
    if ((ps->rc = lex(ps))) return ps->rc;
    if (!word_is(&ps->tok, "@count") && !word_is(&ps->tok, "@size"))
        return perr(ps, ps->tok.column, "expected @count after SUBQUERY(...).");
    e->agg = QA_COUNT;
    return lex(ps);
}

static int parse_operand(parser *ps, q_expr *e) {
    memset(e, 0, sizeof *e);
    token *t = &ps->tok;
    e->column = t->column;
    if (t->kind == T_LBRACE) return parse_list(ps, e);
    if (t->kind == T_IDENT && !word_is(t, "true") && !word_is(t, "false") && !word_is(t, "nil") &&
        !word_is(t, "null")) {
        if (word_is(t, "SUBQUERY")) return parse_subquery(ps, e);
        e->kind = QE_PATH;
        strata_table_t *root = st_table_by_id(ps->store, ps->q->table_id);
        return parse_path(ps, root, e->steps, &e->nsteps, &e->agg, &e->agg_links, true);
    }
    return parse_constant(ps, e);
}

/* ------------------------------------------------------------------ type checks */

/* The type a path yields (after its aggregate). */



static int check_const(parser *ps, const q_expr *path, const q_expr *c, q_op op) {
    if (c->kind == QE_ARG) return STRATA_OK; /* checked when the query runs */
    if (c->kind == QE_LIST) {
        for (int i = 0; i < c->nitems; i++)
            if (check_const(ps, path, &c->items[i], QO_EQ)) return ps->rc;
        return STRATA_OK;
    }
    strata_type pt = q_expr_type(path), vt = c->value.type;
    if (!q_comparable(pt, vt))
        return perr(ps, c->column, "cannot compare %s (a %s) with a %s",
                    path->kind == QE_SUBQUERY ? "SUBQUERY(...).@count"
                    : st_prop_find(table_of(ps, path->steps[path->nsteps - 1].table),
                                   path->steps[path->nsteps - 1].col)->name,
                    st_type_name(pt), st_type_name(vt));
    if (op >= QO_BEGINS && op <= QO_LIKE && vt != STRATA_TYPE_NULL && vt != STRATA_TYPE_STRING &&
        vt != STRATA_TYPE_BINARY)
        return perr(ps, c->column, "a string operator needs a string, not a %s", st_type_name(vt));
    return STRATA_OK;
}

/* The name of what an operand reads, for messages. */
static const char *operand_name(parser *ps, const q_expr *e) {
    if (e->kind == QE_SUBQUERY) return "SUBQUERY(...).@count";
    const q_step *l = &e->steps[e->nsteps - 1];
    st_prop *p = st_prop_find(table_of(ps, l->table), l->col);
    return p ? p->name : "?";
}

/* Two properties compared (age > score, name == company.name): their types must compare. */
static int check_paths(parser *ps, const q_node *n) {
    strata_type lt = q_expr_type(&n->lhs), rt = q_expr_type(&n->rhs);
    bool text = n->op >= QO_BEGINS && n->op <= QO_LIKE;
    bool ok = text ? (lt == STRATA_TYPE_STRING || lt == STRATA_TYPE_BINARY || lt == STRATA_TYPE_MIXED) &&
                     (rt == STRATA_TYPE_STRING || rt == STRATA_TYPE_BINARY || rt == STRATA_TYPE_MIXED)
                   : q_comparable(lt, rt) || q_comparable(rt, lt);
    if (ok && lt == STRATA_TYPE_LINK && rt == STRATA_TYPE_LINK && !n->lhs.agg && !n->rhs.agg) {
        const q_step *a = &n->lhs.steps[n->lhs.nsteps - 1], *b = &n->rhs.steps[n->rhs.nsteps - 1];
        uint32_t at = a->back ? a->table : st_prop_find(table_of(ps, a->table), a->col)->target;
        uint32_t bt = b->back ? b->table : st_prop_find(table_of(ps, b->table), b->col)->target;
        ok = at == bt;
    }
    if (!ok)
        return perr(ps, n->rhs.column, "cannot compare %s (a %s) with %s (a %s)%s",
                    operand_name(ps, &n->lhs), st_type_name(lt), operand_name(ps, &n->rhs),
                    st_type_name(rt), lt == STRATA_TYPE_LINK && rt == STRATA_TYPE_LINK
                    ? ": they link to different tables" : "");
    return STRATA_OK;
}

/* ------------------------------------------------------------------ predicates */

static q_node *new_node(parser *ps, q_node_kind k) {
    q_node *n = own(ps, sizeof *n);
    if (!n) perr(ps, ps->tok.column, "out of memory");
    else n->kind = k;
    return n;
}

static q_node *parse_or(parser *ps);

static bool parse_op(parser *ps, q_op *op) {
    token *t = &ps->tok;
    static const struct { const char *s; q_op op; } sym[] = {
        {"==", QO_EQ}, {"=", QO_EQ}, {"!=", QO_NE}, {"<>", QO_NE}, {"<=", QO_LE}, {">=", QO_GE},
        {"<", QO_LT}, {">", QO_GT}};
    static const struct { const char *w; q_op op; } words[] = {
        {"BEGINSWITH", QO_BEGINS}, {"ENDSWITH", QO_ENDS}, {"CONTAINS", QO_CONTAINS},
        {"LIKE", QO_LIKE}, {"IN", QO_IN}, {"BETWEEN", QO_BETWEEN}, {"GEOWITHIN", QO_GEOWITHIN},
        {"TEXT", QO_TEXT}};
    for (size_t i = 0; i < sizeof sym / sizeof *sym; i++)
        if (is_op(t, sym[i].s)) return *op = sym[i].op, true;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (word_is(t, words[i].w)) return *op = words[i].op, true;
    return false;
}

/* ------------------------------------------------------------------ geo literals
 *   geoBox([lng, lat], [lng, lat])      south-west and north-east corners
 *   geoCircle([lng, lat], radians)
 *   geoPolygon({[lng, lat], ...}, {...})  the boundary, then holes; each ring closed
 * (Realm's query language), parsed into a strata_geo the query owns. */

typedef struct geo_build {
    double *pts;
    size_t n, cap;
    size_t *ends;
    size_t nrings;
} geo_build;

static int geo_number(parser *ps, double *out) {
    token *t = &ps->tok;
    if (t->kind == T_INT) *out = (double)t->i;
    else if (t->kind == T_FLOAT) *out = t->d;
    else return perr(ps, t->column, "expected a number");
    return lex(ps);
}

/* [lng, lat] or [lng, lat, altitude] */
static int geo_point(parser *ps, geo_build *b) {
    if (ps->tok.kind != T_LBRACKET) return perr(ps, ps->tok.column, "expected '[' to start a point [longitude, latitude]");
    if (lex(ps)) return ps->rc;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        double *g = realloc(b->pts, 2 * cap * sizeof *g);
        if (!g) return perr(ps, ps->tok.column, "out of memory");
        b->pts = g;
        b->cap = cap;
    }
    double alt;
    if (geo_number(ps, &b->pts[2 * b->n]) || expect(ps, T_COMMA, "',' between a point's longitude and latitude") ||
        geo_number(ps, &b->pts[2 * b->n + 1]))
        return ps->rc;
    if (ps->tok.kind == T_COMMA && (lex(ps) || geo_number(ps, &alt))) return ps->rc;
    b->n++;
    return expect(ps, T_RBRACKET, "']' to end a point");
}

static int geo_ring_end(parser *ps, geo_build *b) {
    size_t *g = realloc(b->ends, (b->nrings + 1) * sizeof *g);
    if (!g) return perr(ps, ps->tok.column, "out of memory");
    b->ends = g;
    b->ends[b->nrings++] = b->n;
    return STRATA_OK;
}

static int parse_geo_literal(parser *ps, q_expr *e) {
    token *t = &ps->tok;
    e->column = t->column;
    strata_geo_kind kind = word_is(t, "geoBox") ? STRATA_GEO_BOX : word_is(t, "geoCircle") ? STRATA_GEO_CIRCLE
                         : word_is(t, "geoPolygon") ? STRATA_GEO_POLYGON : 0;
    if (!kind) return perr(ps, t->column, "expected a region after GEOWITHIN: an argument ($n), geoBox(...), geoCircle(...) or geoPolygon(...)");
    geo_build b = {0};
    double radius = 0;
    int rc = lex(ps) || expect(ps, T_LPAREN, "'(' after the region's name") ? ps->rc : STRATA_OK;
    if (!rc && kind == STRATA_GEO_BOX) {
        rc = geo_point(ps, &b) || expect(ps, T_COMMA, "',' between the box's corners") || geo_point(ps, &b) ? ps->rc : 0;
    } else if (!rc && kind == STRATA_GEO_CIRCLE) {
        rc = geo_point(ps, &b) || expect(ps, T_COMMA, "',' before the circle's radius") || geo_number(ps, &radius) ? ps->rc : 0;
    } else if (!rc) {
        for (;;) {
            if ((rc = expect(ps, T_LBRACE, "'{' to start a ring of points"))) break;
            for (;;) {
                if ((rc = geo_point(ps, &b))) break;
                if (ps->tok.kind != T_COMMA) break;
                if ((rc = lex(ps))) break;
            }
            if (rc || (rc = expect(ps, T_RBRACE, "'}' to end a ring")) || (rc = geo_ring_end(ps, &b))) break;
            if (ps->tok.kind != T_COMMA) break;
            if ((rc = lex(ps))) break;
        }
    }
    if (!rc) rc = expect(ps, T_RPAREN, "')' to end the region");
    strata_geo *g = rc ? NULL : own(ps, sizeof *g);
    double *pts = g ? own(ps, 2 * b.n * sizeof *pts) : NULL;
    size_t *ends = pts && b.nrings ? own(ps, b.nrings * sizeof *ends) : NULL;
    if (!rc && (!g || !pts || (b.nrings && !ends))) rc = perr(ps, e->column, "out of memory");
    if (!rc) {
        memcpy(pts, b.pts, 2 * b.n * sizeof *pts);
        if (b.nrings) memcpy(ends, b.ends, b.nrings * sizeof *ends);
        *g = (strata_geo){.kind = kind, .points = pts, .npoints = b.n, .ring_ends = ends, .nrings = b.nrings,
                          .radius = radius};
        e->kind = QE_CONST;
        e->value = (strata_value){.type = STRATA_TYPE_GEO, .u.geo.shape = g};
    }
    free(b.pts);
    free(b.ends);
    return rc;
}

/* path TEXT 'terms': the path yields strings (or mixed values), and constant terms compile. */
static int check_text(parser *ps, const q_node *n) {
    strata_type t = q_expr_type(&n->lhs);
    if (n->lhs.kind != QE_PATH || n->lhs.agg != QA_NONE ||
        (t != STRATA_TYPE_STRING && t != STRATA_TYPE_MIXED))
        return perr(ps, n->lhs.column, "TEXT needs a string property, and %s is a %s",
                    operand_name(ps, &n->lhs), st_type_name(t));
    if (n->rhs.kind != QE_CONST) return STRATA_OK;
    st_fts *f;
    char why[160];
    int rc = st_fts_compile(n->rhs.value.u.bytes.data, n->rhs.value.u.bytes.len, &f, why, sizeof why);
    if (rc == STRATA_ERR_NO_MEMORY) return perr(ps, n->rhs.column, "out of memory");
    if (rc) return perr(ps, n->rhs.column, "TEXT '%.*s': %s", (int)n->rhs.value.u.bytes.len,
                        (const char *)n->rhs.value.u.bytes.data, why);
    st_fts_free(f);
    return STRATA_OK;
}

static q_op mirror(q_op op) {
    switch (op) {
    case QO_LT: return QO_GT;
    case QO_LE: return QO_GE;
    case QO_GT: return QO_LT;
    case QO_GE: return QO_LE;
    default: return op;
    }
}

__attribute__((noinline)) static q_node *parse_comparison(parser *ps) {
    q_node *n = new_node(ps, QN_CMP);
    if (!n) return NULL;
    n->quant = QQ_ANY;
    bool quantified = false;
    if (word_is(&ps->tok, "ANY") || word_is(&ps->tok, "SOME")) quantified = true;
    else if (word_is(&ps->tok, "ALL")) n->quant = QQ_ALL, quantified = true;
    else if (word_is(&ps->tok, "NONE")) n->quant = QQ_NONE, quantified = true;
    int qcol = ps->tok.column;
    if (quantified && lex(ps)) return NULL;
    if (parse_operand(ps, &n->lhs)) return NULL;
    int opcol = ps->tok.column;
    if (!parse_op(ps, &n->op)) {
        perr(ps, opcol, "expected a comparison operator (==, !=, <, <=, >, >=, BEGINSWITH, "
                        "ENDSWITH, CONTAINS, LIKE, IN, BETWEEN, GEOWITHIN, TEXT)");
        return NULL;
    }
    if (lex(ps)) return NULL;
    if (ps->tok.kind == T_FLAGS) {
        if (n->op != QO_EQ && n->op != QO_NE && (n->op < QO_BEGINS || n->op > QO_LIKE) && n->op != QO_IN) {
            perr(ps, ps->tok.column, "[c] and [d] apply to string comparisons");
            return NULL;
        }
        n->flags = ps->tok.flags;
        if (lex(ps)) return NULL;
    }
    if (n->op == QO_BETWEEN) {
        if (ps->tok.kind != T_LBRACE) {
            perr(ps, ps->tok.column, "expected '{' after BETWEEN");
            return NULL;
        }
        if (parse_list(ps, &n->rhs)) return NULL;
        if (n->rhs.nitems != 2) {
            perr(ps, n->rhs.column, "BETWEEN takes {low, high}: 2 values, not %d", n->rhs.nitems);
            return NULL;
        }
    } else if (n->op == QO_GEOWITHIN) {
        if (ps->tok.kind == T_ARG) {
            if (parse_constant(ps, &n->rhs)) return NULL;
        } else if (parse_geo_literal(ps, &n->rhs)) {
            return NULL;
        }
    } else if (n->op == QO_TEXT) {
        if (ps->tok.kind != T_STRING && ps->tok.kind != T_ARG) {
            perr(ps, ps->tok.column, "expected a string or an argument after TEXT");
            return NULL;
        }
        if (parse_constant(ps, &n->rhs)) return NULL;
    } else if (n->op == QO_IN) {
        if (ps->tok.kind == T_LBRACE) {
            if (parse_list(ps, &n->rhs)) return NULL;
        } else if (ps->tok.kind == T_ARG) {
            if (parse_constant(ps, &n->rhs)) return NULL;
        } else {
            perr(ps, ps->tok.column, "expected '{' or an argument after IN");
            return NULL;
        }
    } else if (parse_operand(ps, &n->rhs)) {
        return NULL;
    }
    /* the property on the left: a comparison is mirrored; a string operator remembers that
     * the constant is the text and the property the part ('abc' CONTAINS name) */
    if (n->lhs.kind != QE_PATH && n->lhs.kind != QE_SUBQUERY &&
        (n->rhs.kind == QE_PATH || n->rhs.kind == QE_SUBQUERY) &&
        (n->op <= QO_GE || (n->op >= QO_BEGINS && n->op <= QO_LIKE))) {
        q_expr tmp = n->lhs;
        n->lhs = n->rhs;
        n->rhs = tmp;
        if (n->op <= QO_GE) n->op = mirror(n->op);
        else n->reversed = true;
    }
    if (n->lhs.kind != QE_PATH && n->lhs.kind != QE_SUBQUERY) {
        perr(ps, n->lhs.column, "expected a property on one side of the comparison");
        return NULL;
    }
    if ((n->rhs.kind == QE_PATH || n->rhs.kind == QE_SUBQUERY) && check_paths(ps, n)) return NULL;
    bool through_list = false;
    int agg_at = n->lhs.nsteps - 1 - n->lhs.agg_links; /* the step an aggregate folds */
    for (int i = 0; n->lhs.kind == QE_PATH && i < n->lhs.nsteps; i++)
        through_list |= q_step_many(&n->lhs.steps[i]) && !(i == agg_at && n->lhs.agg);
    if (quantified && !through_list) {
        perr(ps, qcol, "ANY, ALL and NONE need a path through a list");
        return NULL;
    }
    const q_step *last = n->lhs.kind == QE_PATH ? &n->lhs.steps[n->lhs.nsteps - 1] : NULL;
    if (last && q_step_many(last) && q_step_type(last) == STRATA_TYPE_LINK && n->lhs.agg == QA_NONE &&
        n->rhs.kind == QE_CONST &&
        n->rhs.value.type == STRATA_TYPE_NULL && (n->op == QO_EQ || n->op == QO_NE)) {
        perr(ps, n->rhs.column, "a list of links is never null: compare its @count with 0 instead");
        return NULL;
    }
    if (n->op == QO_TEXT) return check_text(ps, n) ? NULL : n;
    if (n->rhs.kind != QE_PATH && n->rhs.kind != QE_SUBQUERY && n->op != QO_GEOWITHIN &&
        check_const(ps, &n->lhs, &n->rhs, n->op))
        return NULL;
    return n;
}

static q_node *parse_unary(parser *ps) {
    token *t = &ps->tok;
    if (word_is(t, "NOT") || is_op(t, "!")) {
        q_node *n = new_node(ps, QN_NOT);
        if (!n || !nest(ps, t->column) || lex(ps) || !(n->a = parse_unary(ps))) return NULL;
        ps->depth--;
        return n;
    }
    if (t->kind == T_LPAREN) {
        if (!nest(ps, t->column) || lex(ps)) return NULL;
        q_node *n = parse_or(ps);
        if (!n) return NULL;
        if (ps->tok.kind != T_RPAREN) {
            perr(ps, ps->tok.column, "expected ')'");
            return NULL;
        }
        ps->depth--;
        return lex(ps) ? NULL : n;
    }
    if (word_is(t, "TRUEPREDICATE") || word_is(t, "FALSEPREDICATE")) {
        q_node *n = new_node(ps, word_is(t, "TRUEPREDICATE") ? QN_TRUE : QN_FALSE);
        return !n || lex(ps) ? NULL : n;
    }
    if (t->kind == T_END) {
        perr(ps, t->column, "expected a predicate");
        return NULL;
    }
    return parse_comparison(ps);
}

/* A chain of terms joined by AND (or OR) as one n-ary node: binding and evaluating it loop
 * over its terms instead of recursing once per term. */
static q_node *parse_chain(parser *ps, q_node_kind kind, q_node *(*term)(parser *),
                           const char *word, const char *sym) {
    q_node *first = term(ps);
    if (!first || !(word_is(&ps->tok, word) || is_op(&ps->tok, sym))) return first;
    q_node *n = new_node(ps, kind);
    if (!n) return NULL;
    size_t cap = 8;
    n->kids = malloc(cap * sizeof *n->kids);
    if (!n->kids) {
        perr(ps, ps->tok.column, "out of memory");
        return NULL;
    }
    n->kids[n->nkids++] = first;
    while (word_is(&ps->tok, word) || is_op(&ps->tok, sym)) {
        if (lex(ps)) break;
        q_node *k = term(ps);
        if (!k) break;
        if ((size_t)n->nkids == cap) {
            q_node **g = realloc(n->kids, 2 * cap * sizeof *g);
            if (!g) {
                perr(ps, ps->tok.column, "out of memory");
                break;
            }
            n->kids = g;
            cap *= 2;
        }
        n->kids[n->nkids++] = k;
    }
    if (!keep(ps, n->kids)) { /* the query frees the array with its nodes */
        perr(ps, ps->tok.column, "out of memory");
        return NULL;
    }
    return ps->rc ? NULL : n;
}

static q_node *parse_and(parser *ps) { return parse_chain(ps, QN_AND, parse_unary, "AND", "&&"); }

static q_node *parse_or(parser *ps) { return parse_chain(ps, QN_OR, parse_and, "OR", "||"); }

/* SORT(a ASC, b DESC) / DISTINCT(a, b) */
static int parse_keylist(parser *ps, q_sort *out, int *n, bool sort) {
    if ((ps->rc = lex(ps))) return ps->rc;
    if ((ps->rc = expect(ps, T_LPAREN, "'('"))) return ps->rc;
    strata_table_t *root = st_table_by_id(ps->store, ps->q->table_id);
    for (;;) {
        if (*n == Q_MAX_SORT) return perr(ps, ps->tok.column, "more than %d keys", Q_MAX_SORT);
        q_sort *s = &out[(*n)++];
        memset(s, 0, sizeof *s);
        int col = ps->tok.column;
        if (parse_path(ps, root, s->steps, &s->nsteps, NULL, NULL, false)) return ps->rc;
        for (int i = 0; i < s->nsteps; i++)
            if (q_step_many(&s->steps[i]))
                return perr(ps, col, "cannot %s by a list", sort ? "sort" : "be distinct");
        if (sort) {
            if (word_is(&ps->tok, "ASC") || word_is(&ps->tok, "ASCENDING")) {
                if ((ps->rc = lex(ps))) return ps->rc;
            } else if (word_is(&ps->tok, "DESC") || word_is(&ps->tok, "DESCENDING")) {
                s->desc = true;
                if ((ps->rc = lex(ps))) return ps->rc;
            }
        }
        if (ps->tok.kind == T_COMMA) {
            if ((ps->rc = lex(ps))) return ps->rc;
            continue;
        }
        return expect(ps, T_RPAREN, sort ? "',' or ')' (or ASC/DESC)" : "',' or ')'");
    }
}

int st_query_parse(strata_txn_t *txn, const char *table, const char *text,
                   const strata_name_map_t *names, strata_query_t **out, strata_error *err) {
    strata_table_t *t;
    int rc = st_table_open(txn, table, &t, err);
    if (rc) return rc;
    strata_query_t *q = calloc(1, sizeof *q);
    if (!q) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    snprintf(q->table, sizeof q->table, "%s", table);
    q->table_id = t->id;
    q->limit = -1;
    parser ps = {txn, t->store, names, q, text, {0}, 0, NULL, 0, NULL, err, 0, 0};
    ps.tok.p = text;
    ps.tok.len = 0;
    if (lex(&ps) == STRATA_OK) {
        q->root = parse_or(&ps);
        while (!ps.rc && ps.tok.kind != T_END) {
            if (word_is(&ps.tok, "SORT")) {
                parse_keylist(&ps, q->sort, &q->nsort, true);
            } else if (word_is(&ps.tok, "DISTINCT")) {
                parse_keylist(&ps, q->distinct, &q->ndistinct, false);
            } else if (word_is(&ps.tok, "LIMIT")) {
                if (lex(&ps) || expect(&ps, T_LPAREN, "'('")) break;
                if (ps.tok.kind != T_INT || ps.tok.i < 0) {
                    perr(&ps, ps.tok.column, "expected a non-negative integer in LIMIT(...)");
                    break;
                }
                q->limit = ps.tok.i;
                if (lex(&ps) || expect(&ps, T_RPAREN, "')'")) break;
            } else {
                perr(&ps, ps.tok.column, "expected AND, OR, SORT, DISTINCT, LIMIT or the end");
            }
        }
    }
    if (ps.rc || !q->root) {
        if (!ps.rc) st_err(err, STRATA_ERR_INVALID_ARGUMENT, "query on '%s': no predicate", table);
        rc = ps.rc ? ps.rc : STRATA_ERR_INVALID_ARGUMENT;
        st_query_free(q);
        return rc;
    }
    *out = q;
    return STRATA_OK;
}

void st_query_free(strata_query_t *q) {
    if (!q) return;
    for (size_t i = 0; i < q->nowned; i++) free(q->owned[i]);
    free(q->owned);
    free(q->text);
    free(q);
}
