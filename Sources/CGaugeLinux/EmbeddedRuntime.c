#include <stdint.h>

/*
 * Two of the Embedded Swift standard library's runtime functions, as the compiler expects
 * them, for the Embedded Swift build only (tools/build-release defines
 * GAUGE_EMBEDDED_SWIFT; the build with the Swift runtime uses its own).
 *
 * The compiler declares swift_bridgeObjectRetain with LLVM's `returned` on its argument:
 * the call gives back the very value it was passed, so a caller may go on with the result
 * in place of the argument. This toolchain's embedded standard library returns the object
 * with its tag bits cleared instead (its bridge object mask, 0x8fff_ffff_ffff_fff8 on
 * 64-bit machines), and on AArch64, where the argument and the result are the same
 * register, the code made for a caller does go on with it: a small string (tag 0xE) came
 * back from a retain as a large one (0x8) with no storage, and `gaugectl apt` died on its
 * first status line in a build whose SIL inliner was off. These definitions, strong where
 * the library's are weak, retain the same object and return the argument unchanged.
 * On 32-bit machines the mask is all ones and the library's are already right.
 */
#if defined(GAUGE_EMBEDDED_SWIFT) && UINTPTR_MAX == UINT64_MAX

void *swift_retain_n(void *object, uint32_t count);

void *swift_bridgeObjectRetain_n(void *object, uint32_t count) {
    swift_retain_n((void *)((uintptr_t)object & UINT64_C(0x8ffffffffffffff8)), count);
    return object;
}

void *swift_bridgeObjectRetain(void *object) {
    return swift_bridgeObjectRetain_n(object, 1);
}

#endif
