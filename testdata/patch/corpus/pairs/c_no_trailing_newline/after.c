#include <stdio.h>
#include <string.h>

size_t count_char(const char *s, char c) {
    size_t n = 0;
    if (s == NULL) return 0;
    for (; *s; s++) {
        if (*s == c) n++;
    }
    return n;
}

void print_count(const char *s) {
    printf("%zu\n", count_char(s, 'a'));
}