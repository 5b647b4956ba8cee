/* One UTF-8 check for the compiled readers (formats/_csqlite.c, formats/kineto/_cscan.c).

   Why: both readers hand back text only where it is well-formed UTF-8 -- what Python's decode would accept -- and each
   spelled the same lead-byte table, continuation loop and range checks; one helper keeps the two readers' "valid"
   the same word. */

#ifndef TB_GPU_ADVISOR_UTF8_H
#define TB_GPU_ADVISOR_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The byte length of the multi-byte UTF-8 sequence at ``s`` (its lead byte ``s[0]`` >= 0x80), ``avail`` bytes
   readable from ``s``: 2 to 4 where it is well formed (no overlong form, no surrogate, at most U+10FFFF); 0 where it
   is not; -1 where a well-formed lead byte's sequence runs past ``avail`` (a cut the caller may read on past). */
static inline int utf8_sequence(const uint8_t *s, size_t avail) {
    uint8_t c = s[0];
    int k;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { k = 1; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { k = 2; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { k = 3; cp = c & 0x07; }
    else return 0;
    if (avail <= (size_t)k) return -1;
    for (int j = 1; j <= k; j++) {
        if ((s[j] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[j] & 0x3F);
    }
    if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return k + 1;
}

#endif
