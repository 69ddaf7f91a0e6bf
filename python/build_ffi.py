"""Builds `strata._native`: cffi in out-of-line API mode over the real `strata.h`, with the C
core's sources compiled into the extension (no shared library to find at run time).

The declarations cffi needs are read from `strata.h` itself (comments and preprocessor lines
dropped), so the extension is compiled against the header it declares: a signature that differs
fails the build. The core is found beside this folder (`../CCore`), or where STRATA_CCORE says.
"""
import glob
import os
import re
import shutil

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
CCORE = os.environ.get("STRATA_CCORE", os.path.join(HERE, "..", "CCore"))
# setuptools takes only paths inside this folder: the core's sources are copied under build/
# (refreshed on every build; the copy is never edited)
COPY = os.path.join(HERE, "build", "ccore")
if os.path.abspath(CCORE) != COPY and os.path.isdir(os.path.join(CCORE, "src")):
    for part in ("include", "src"):
        shutil.rmtree(os.path.join(COPY, part), ignore_errors=True)
        shutil.copytree(os.path.join(CCORE, part), os.path.join(COPY, part))
HEADER = os.path.join(COPY, "include", "strata.h")


def declarations(path):
    """strata.h as cffi's parser takes it: no comments, no preprocessor lines, no STRATA_API."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    lines = [l for l in text.split("\n") if not l.lstrip().startswith("#")]
    text = "\n".join(lines).replace("STRATA_API ", "")
    text = text.replace('extern "C" {', "")
    text = text.rstrip()
    if text.endswith("}"):  # the closing brace of the C++ guard
        text = text[:-1]
    # off_t comes from <sys/types.h>; the compiler says what it is
    return "typedef int... off_t;\n" + text


# The binding's glue, in C, calling only the public ABI: a property read into a flat struct (a
# nested strata_value costs a cdata object per level read from Python), and a lookup by an
# integer primary key without building a strata_value in Python.
GLUE_DECLS = """
typedef struct strata_py_value { int type; int64_t i; double d; const char *p; size_t n; } strata_py_value;
int strata_py_get(strata_table_t *table, strata_key_t key, strata_col_t col, strata_py_value *flat,
                  strata_value *full, strata_error *err);
int strata_py_find_int(strata_table_t *table, int64_t pk, strata_key_t *key, strata_error *err);
int strata_py_set_int(strata_table_t *table, strata_key_t key, strata_col_t col, int64_t v, strata_error *err);
int strata_py_set_double(strata_table_t *table, strata_key_t key, strata_col_t col, double v, strata_error *err);
int strata_py_set_bytes(strata_table_t *table, strata_key_t key, strata_col_t col, int type, const char *p,
                        size_t n, strata_error *err);
int strata_py_create_int(strata_table_t *table, int64_t pk, strata_key_t *key, strata_error *err);
"""
GLUE = """
#include "strata.h"
typedef struct strata_py_value { int type; int64_t i; double d; const char *p; size_t n; } strata_py_value;

/* Read a property: scalars and bytes into `flat`; every other type (flat->type tells) in `full`. */
static int strata_py_get(strata_table_t *table, strata_key_t key, strata_col_t col, strata_py_value *flat,
                         strata_value *full, strata_error *err) {
    int rc = strata_obj_get(table, key, col, full, err);
    if (rc) return rc;
    flat->type = (int)full->type;
    switch (full->type) {
    case STRATA_TYPE_BOOL: flat->i = full->u.b; break;
    case STRATA_TYPE_INT: flat->i = full->u.i; break;
    case STRATA_TYPE_DOUBLE: flat->d = full->u.d; break;
    case STRATA_TYPE_FLOAT: flat->d = full->u.f; break;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY: flat->p = (const char *)full->u.bytes.data; flat->n = full->u.bytes.len; break;
    default: break;
    }
    return 0;
}

static int strata_py_find_int(strata_table_t *table, int64_t pk, strata_key_t *key, strata_error *err) {
    strata_value v = {.type = STRATA_TYPE_INT, .u.i = pk};
    return strata_obj_find_pk(table, &v, key, err);
}

static int strata_py_set_int(strata_table_t *table, strata_key_t key, strata_col_t col, int64_t i,
                             strata_error *err) {
    strata_value v = {.type = STRATA_TYPE_INT, .u.i = i};
    return strata_obj_set(table, key, col, &v, err);
}

static int strata_py_set_double(strata_table_t *table, strata_key_t key, strata_col_t col, double d,
                                strata_error *err) {
    strata_value v = {.type = STRATA_TYPE_DOUBLE, .u.d = d};
    return strata_obj_set(table, key, col, &v, err);
}

/* A string or binary value (`type`) from bytes Python owns for the call. */
static int strata_py_set_bytes(strata_table_t *table, strata_key_t key, strata_col_t col, int type,
                               const char *p, size_t n, strata_error *err) {
    strata_value v = {.type = (strata_type)type, .u.bytes = {p, n}};
    return strata_obj_set(table, key, col, &v, err);
}

static int strata_py_create_int(strata_table_t *table, int64_t pk, strata_key_t *key, strata_error *err) {
    strata_value v = {.type = STRATA_TYPE_INT, .u.i = pk};
    return strata_obj_create_pk(table, &v, key, err);
}
"""

ffibuilder = FFI()
ffibuilder.cdef(declarations(HEADER) + GLUE_DECLS)
ffibuilder.set_source(
    "strata._native",
    GLUE,
    sources=sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(COPY, "src", "*", "*.c"))),
    include_dirs=[os.path.join("build", "ccore", d) for d in ("include", "src")],
    libraries=["xxhash", "lz4", "utf8proc", "crypto", "uring", "pthread", "m"],
    extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-O2", "-fvisibility=hidden"],
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=os.path.join(HERE, "build"), verbose=False)
