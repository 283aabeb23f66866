"""PCRE2 10.42 (Debian's libpcre2-8-0, the version MongoDB vendors) as a test oracle.

Reads one JSON request per line on stdin and answers one JSON line each:
  {"compile": pattern, "flags": "imsx"}       -> {"ok": bool, "error": str, "offset": int}
  {"match": pattern, "flags": "", "subject": s} -> {"match": bool or null (null: a match error)}
  {"steps": pattern, "flags": "", "subject": s, "cap": n}
      -> {"steps": n or null}: the smallest match limit that lets pcre2_match finish,
         the count PCRE2 uses for its backtracking budget (null when above cap).
Patterns compile as MongoDB compiles them: PCRE2_UTF plus the flags given.
"""
import ctypes
import json
import sys

lib = ctypes.CDLL('libpcre2-8.so.0')
lib.pcre2_compile_8.restype = ctypes.c_void_p
lib.pcre2_compile_8.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
                                ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
lib.pcre2_code_free_8.argtypes = [ctypes.c_void_p]
lib.pcre2_get_error_message_8.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
lib.pcre2_match_data_create_from_pattern_8.restype = ctypes.c_void_p
lib.pcre2_match_data_create_from_pattern_8.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.pcre2_match_data_free_8.argtypes = [ctypes.c_void_p]
lib.pcre2_match_context_create_8.restype = ctypes.c_void_p
lib.pcre2_match_context_create_8.argtypes = [ctypes.c_void_p]
lib.pcre2_set_match_limit_8.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
lib.pcre2_match_8.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_uint32,
                              ctypes.c_void_p, ctypes.c_void_p]

FLAGS = {'i': 0x8, 's': 0x20, 'x': 0x80, 'm': 0x400}
UTF = 0x80000
ERROR_MATCHLIMIT = -47


def compile_pattern(pattern, flags):
    options = UTF
    for flag in flags:
        options |= FLAGS[flag]
    code = ctypes.c_int()
    offset = ctypes.c_size_t()
    data = pattern.encode('utf-8', 'surrogatepass')
    compiled = lib.pcre2_compile_8(data, len(data), options, ctypes.byref(code), ctypes.byref(offset), None)
    if compiled:
        return compiled, None, 0
    buffer = ctypes.create_string_buffer(256)
    lib.pcre2_get_error_message_8(code.value, buffer, 256)
    return None, buffer.value.decode(), offset.value


def steps(compiled, subject, cap):
    data = subject.encode('utf-8')
    match_data = lib.pcre2_match_data_create_from_pattern_8(compiled, None)
    context = lib.pcre2_match_context_create_8(None)

    def finishes(limit):
        lib.pcre2_set_match_limit_8(context, limit)
        return lib.pcre2_match_8(compiled, data, len(data), 0, 0, match_data, context) != ERROR_MATCHLIMIT

    try:
        if not finishes(cap):
            return None
        low, high = 1, cap
        while low < high:
            middle = (low + high) // 2
            if finishes(middle):
                high = middle
            else:
                low = middle + 1
        return low
    finally:
        lib.pcre2_match_data_free_8(match_data)


def match(compiled, subject):
    data = subject.encode('utf-8')
    match_data = lib.pcre2_match_data_create_from_pattern_8(compiled, None)
    try:
        result = lib.pcre2_match_8(compiled, data, len(data), 0, 0, match_data, None)
        return True if result >= 0 else False if result == -1 else None
    finally:
        lib.pcre2_match_data_free_8(match_data)


for line in sys.stdin.buffer:
    request = json.loads(line)
    pattern = request.get('compile', request.get('match', request.get('steps')))
    compiled, error, offset = compile_pattern(pattern, request.get('flags', ''))
    if 'compile' in request:
        answer = {'ok': compiled is not None, 'error': error, 'offset': offset}
    elif 'match' in request:
        answer = {'match': match(compiled, request['subject']) if compiled else None, 'error': error}
    else:
        answer = {'steps': steps(compiled, request['subject'], request.get('cap', 1000000)) if compiled else None, 'error': error}
    if compiled:
        lib.pcre2_code_free_8(compiled)
    sys.stdout.write(json.dumps(answer) + '\n')
    sys.stdout.flush()
