#include <stdio.h>
#include <string.h>

int count_char(const char *s, char c) {
    int n = 0;
    for (; *s; s++) {
        if (*s == c) n++;
    }
    return n;
}

void print_count(const char *s) {
    printf("%d\n", count_char(s, 'a'));
}