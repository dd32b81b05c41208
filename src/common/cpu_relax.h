/* cc_cpu_relax: the body of a spin-wait loop (the CC_SPIN_NS spins of both
 * channels). Tells the core the thread is spinning: x86's PAUSE (saves
 * power, gives a hyperthread sibling the core, avoids the memory-order
 * flush on exit), aarch64's YIELD; elsewhere a compiler barrier only, so
 * the loop still builds and still re-reads memory. Header only. */
#ifndef CC_COMMON_CPU_RELAX_H
#define CC_COMMON_CPU_RELAX_H

static inline void cc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif
