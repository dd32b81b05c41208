/* Replays saved fuzz inputs through fuzz_frame.c's target, without
 * libFuzzer, so the normal test run (and the ASan build) covers every input
 * the fuzzer ever kept. usage: cc-fuzz-replay FILE... ; prints the count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		uint8_t *buf = NULL;
		size_t len = 0, cap = 0;
		for (;;) {
			if (len == cap) {
				cap = cap ? cap * 2 : 4096;
				uint8_t *nb = realloc(buf, cap);
				if (!nb)
					return 1;
				buf = nb;
			}
			size_t r = fread(buf + len, 1, cap - len, f);
			len += r;
			if (r == 0)
				break;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		n++;
	}
	printf("replayed %d inputs\n", n);
	return 0;
}
