"""A small classic-BPF interpreter for seccomp filters, so the tests can ask
"what would the kernel answer for this system call and these arguments?"
of the exact bytes the worker installs (`codecage-worker-X --export-bpf`).

What it models (the references are the kernel's, not libseccomp's):

- The program is an array of `struct sock_filter { __u16 code; __u8 jt;
  __u8 jf; __u32 k; }`, 8 bytes each, in host byte order (little-endian on
  x86_64): include/uapi/linux/filter.h.
- The opcode fields are those of include/uapi/linux/bpf_common.h and
  filter.h: class = code & 0x07 (LD, LDX, ST, STX, ALU, JMP, RET, MISC),
  size = code & 0x18, mode = code & 0xe0, op = code & 0xf0, src = code &
  0x08 (K or X), rval = code & 0x18 (K or A), miscop = code & 0xf8.
- The input is `struct seccomp_data { int nr; __u32 arch; __u64
  instruction_pointer; __u64 args[6]; }` (64 bytes, little-endian): a
  `BPF_LD|BPF_W|BPF_ABS` at offset k loads the 32-bit word at k, so
  args[i] is the pair of words at 16 + 8*i (low half) and 20 + 8*i (high
  half). Documentation/userspace-api/seccomp_filter.rst and
  include/uapi/linux/seccomp.h.
- The instruction set is exactly the one kernel/seccomp.c's
  seccomp_check_filter() accepts: LD|W|ABS (aligned, inside seccomp_data),
  LD|W|LEN and LDX|W|LEN (= 64), LD|IMM, LDX|IMM, LD|MEM, LDX|MEM, ST, STX,
  ALU ADD/SUB/MUL/DIV/AND/OR/XOR/LSH/RSH with K or X and NEG, MISC
  TAX/TXA, JMP JA and JEQ/JGT/JGE/JSET with K or X, RET K and RET A.
  Anything else (BPF_MOD, half-word or byte loads, BPF_IND, BPF_MSH, RET
  X ...) raises BpfError: the kernel refuses such a filter, and guessing
  what it would mean would make the tests prove nothing.
- The structural checks of net/core/filter.c's bpf_check_classic(): 1 to
  BPF_MAXINSNS (4096) instructions, every jump lands inside the program,
  the last instruction is a RET, scratch slots are < BPF_MEMWORDS (16),
  constant division by zero and constant shifts of 32 or more are refused.
  Reading a scratch slot nothing stored to raises (the kernel refuses
  such programs up front; here it is found when the path runs).
- A and X are 32-bit unsigned; ALU results wrap at 32 bits; division by
  X == 0 ends the program with 0 (SECCOMP_RET_KILL_THREAD), as the kernel's
  cBPF-to-eBPF conversion does. Jumps only go forward, so every run ends.

run() returns the filter's 32-bit return value; action()/describe() split
it into SECCOMP_RET_ACTION_FULL and SECCOMP_RET_DATA. Several filters
stacked (the kernel takes the most restrictive) are not modelled: the
worker installs one.
"""
import struct

# ---- include/uapi/linux/bpf_common.h and filter.h ----
BPF_LD, BPF_LDX, BPF_ST, BPF_STX, BPF_ALU, BPF_JMP, BPF_RET, BPF_MISC = range(8)
BPF_W, BPF_H, BPF_B = 0x00, 0x08, 0x10
BPF_IMM, BPF_ABS, BPF_IND, BPF_MEM, BPF_LEN, BPF_MSH = 0x00, 0x20, 0x40, 0x60, 0x80, 0xa0
BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND = 0x00, 0x10, 0x20, 0x30, 0x40, 0x50
BPF_LSH, BPF_RSH, BPF_NEG, BPF_MOD, BPF_XOR = 0x60, 0x70, 0x80, 0x90, 0xa0
BPF_JA, BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET = 0x00, 0x10, 0x20, 0x30, 0x40
BPF_K, BPF_X = 0x00, 0x08
BPF_A = 0x10  # RET's rval
BPF_TAX, BPF_TXA = 0x00, 0x80
BPF_MEMWORDS = 16
BPF_MAXINSNS = 4096

# ---- include/uapi/linux/seccomp.h ----
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_KILL_THREAD = 0x00000000
SECCOMP_RET_TRAP = 0x00030000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_USER_NOTIF = 0x7fc00000
SECCOMP_RET_TRACE = 0x7ff00000
SECCOMP_RET_LOG = 0x7ffc0000
SECCOMP_RET_ALLOW = 0x7fff0000
SECCOMP_RET_ACTION_FULL = 0xffff0000
SECCOMP_RET_DATA = 0x0000ffff
SECCOMP_DATA_SIZE = 64  # sizeof(struct seccomp_data)

# ---- include/uapi/linux/audit.h ----
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_RISCV64 = 0xC00000F3
X32_SYSCALL_BIT = 0x40000000  # arch/x86/include/uapi/asm/unistd.h (__X32_SYSCALL_BIT)

_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF

_ALU_OPS = {
    BPF_ADD: "add", BPF_SUB: "sub", BPF_MUL: "mul", BPF_DIV: "div", BPF_OR: "or",
    BPF_AND: "and", BPF_LSH: "lsh", BPF_RSH: "rsh", BPF_XOR: "xor",
}
_JMP_OPS = {BPF_JEQ: "jeq", BPF_JGT: "jgt", BPF_JGE: "jge", BPF_JSET: "jset"}


def errno_action(errno):
    """SECCOMP_RET_ERRNO with its data: what SCMP_ACT_ERRNO(errno) encodes."""
    return SECCOMP_RET_ERRNO | (errno & SECCOMP_RET_DATA)


def describe(ret):
    """A return value as text: ALLOW, ERRNO(1), TRAP, KILL_PROCESS ..."""
    action, data = ret & SECCOMP_RET_ACTION_FULL, ret & SECCOMP_RET_DATA
    names = {
        SECCOMP_RET_KILL_PROCESS: "KILL_PROCESS", SECCOMP_RET_KILL_THREAD: "KILL_THREAD",
        SECCOMP_RET_TRAP: "TRAP", SECCOMP_RET_ERRNO: "ERRNO", SECCOMP_RET_USER_NOTIF: "USER_NOTIF",
        SECCOMP_RET_TRACE: "TRACE", SECCOMP_RET_LOG: "LOG", SECCOMP_RET_ALLOW: "ALLOW",
    }
    name = names.get(action, "UNKNOWN_ACTION_%#x" % action)
    if action in (SECCOMP_RET_ERRNO, SECCOMP_RET_TRACE) or data:
        return "%s(%d)" % (name, data)
    return name


class BpfError(Exception):
    """The program is not one the kernel would accept, or does something
    this interpreter does not model. Never silently guessed around."""


def seccomp_data(nr, arch=AUDIT_ARCH_X86_64, args=(), ip=0):
    """Pack struct seccomp_data (little-endian, as on x86_64). nr is the
    kernel's int: negative numbers and values with the x32 bit are fine;
    each argument is taken modulo 2**64 (a C `long` as the register holds it)."""
    args = list(args) + [0] * (6 - len(args))
    if len(args) != 6:
        raise ValueError("at most six arguments")
    return struct.pack("<IIQ6Q", nr & _U32, arch & _U32, ip & _U64, *(a & _U64 for a in args))


class Program:
    """A validated classic-BPF seccomp program."""

    def __init__(self, insns):
        self.insns = [tuple(i) for i in insns]
        self._validate()

    @classmethod
    def from_bytes(cls, data):
        if len(data) % 8:
            raise BpfError("program length %d is not a multiple of 8" % len(data))
        return cls(struct.iter_unpack("<HBBI", data))

    def to_bytes(self):
        return b"".join(struct.pack("<HBBI", *i) for i in self.insns)

    def __len__(self):
        return len(self.insns)

    # -- validation: bpf_check_classic() + seccomp_check_filter() --

    def _validate(self):
        n = len(self.insns)
        if not 1 <= n <= BPF_MAXINSNS:
            raise BpfError("program has %d instructions (1..%d allowed)" % (n, BPF_MAXINSNS))
        for pc, (code, jt, jf, k) in enumerate(self.insns):
            where = "instruction %d (%s)" % (pc, self.disassemble_one(pc))
            cls = code & 0x07
            if cls == BPF_LD:
                if code == BPF_LD | BPF_W | BPF_ABS:
                    if k >= SECCOMP_DATA_SIZE or k & 3:
                        raise BpfError("%s: load outside seccomp_data or unaligned" % where)
                elif code == BPF_LD | BPF_MEM and k >= BPF_MEMWORDS:
                    raise BpfError("%s: scratch slot out of range" % where)
                elif code not in (BPF_LD | BPF_W | BPF_LEN, BPF_LD | BPF_IMM, BPF_LD | BPF_MEM):
                    raise BpfError("%s: load mode not accepted by seccomp" % where)
            elif cls == BPF_LDX:
                if code == BPF_LDX | BPF_MEM and k >= BPF_MEMWORDS:
                    raise BpfError("%s: scratch slot out of range" % where)
                if code not in (BPF_LDX | BPF_W | BPF_LEN, BPF_LDX | BPF_IMM, BPF_LDX | BPF_MEM):
                    raise BpfError("%s: LDX mode not accepted by seccomp" % where)
            elif cls in (BPF_ST, BPF_STX):
                if code != cls:
                    raise BpfError("%s: unknown store opcode" % where)
                if k >= BPF_MEMWORDS:
                    raise BpfError("%s: scratch slot out of range" % where)
            elif cls == BPF_ALU:
                op, src = code & 0xf0, code & 0x08
                if code == BPF_ALU | BPF_NEG:
                    pass
                elif op not in _ALU_OPS or code > 0xff:
                    raise BpfError("%s: ALU opcode not accepted by seccomp" % where)
                elif src == BPF_K and op == BPF_DIV and k == 0:
                    raise BpfError("%s: division by constant zero" % where)
                elif src == BPF_K and op in (BPF_LSH, BPF_RSH) and k >= 32:
                    raise BpfError("%s: constant shift of 32 or more" % where)
            elif cls == BPF_JMP:
                op = code & 0xf0
                if code == BPF_JMP | BPF_JA:
                    if k >= n - pc - 1:
                        raise BpfError("%s: jump past the end" % where)
                elif op in _JMP_OPS and not code > 0xff:
                    if pc + 1 + max(jt, jf) >= n:
                        raise BpfError("%s: jump past the end" % where)
                else:
                    raise BpfError("%s: jump opcode not accepted by seccomp" % where)
            elif cls == BPF_RET:
                if code not in (BPF_RET | BPF_K, BPF_RET | BPF_A):
                    raise BpfError("%s: RET source not accepted by seccomp" % where)
            else:  # BPF_MISC
                if code not in (BPF_MISC | BPF_TAX, BPF_MISC | BPF_TXA):
                    raise BpfError("%s: MISC opcode not accepted" % where)
        if self.insns[-1][0] & 0x07 != BPF_RET:
            raise BpfError("the last instruction is not a RET")

    # -- execution --

    def run(self, nr, arch=AUDIT_ARCH_X86_64, args=(), ip=0):
        """The filter's 32-bit return value for one system call."""
        data = seccomp_data(nr, arch, args, ip)
        A = X = 0
        mem = [None] * BPF_MEMWORDS
        pc = 0
        while True:
            code, jt, jf, k = self.insns[pc]
            pc += 1
            cls = code & 0x07
            if cls == BPF_LD:
                mode = code & 0xe0
                if mode == BPF_ABS:
                    A = struct.unpack_from("<I", data, k)[0]
                elif mode == BPF_LEN:
                    A = SECCOMP_DATA_SIZE
                elif mode == BPF_IMM:
                    A = k
                else:  # BPF_MEM
                    A = self._load_mem(mem, k, pc - 1)
            elif cls == BPF_LDX:
                mode = code & 0xe0
                if mode == BPF_LEN:
                    X = SECCOMP_DATA_SIZE
                elif mode == BPF_IMM:
                    X = k
                else:
                    X = self._load_mem(mem, k, pc - 1)
            elif cls == BPF_ST:
                mem[k] = A
            elif cls == BPF_STX:
                mem[k] = X
            elif cls == BPF_ALU:
                op = code & 0xf0
                if op == BPF_NEG:
                    A = -A & _U32
                    continue
                v = X if code & BPF_X else k
                if op == BPF_ADD:
                    A = (A + v) & _U32
                elif op == BPF_SUB:
                    A = (A - v) & _U32
                elif op == BPF_MUL:
                    A = (A * v) & _U32
                elif op == BPF_DIV:
                    if v == 0:
                        return 0  # the kernel's conversion: "if X == 0 return 0"
                    A = A // v
                elif op == BPF_OR:
                    A |= v
                elif op == BPF_AND:
                    A &= v
                elif op == BPF_XOR:
                    A ^= v
                elif op in (BPF_LSH, BPF_RSH):
                    if v >= 32:
                        raise BpfError("instruction %d: shift by X=%d is not modelled"
                                       % (pc - 1, v))
                    A = (A << v) & _U32 if op == BPF_LSH else A >> v
            elif cls == BPF_JMP:
                op = code & 0xf0
                if op == BPF_JA:
                    pc += k
                    continue
                v = X if code & BPF_X else k
                if op == BPF_JEQ:
                    taken = A == v
                elif op == BPF_JGT:
                    taken = A > v
                elif op == BPF_JGE:
                    taken = A >= v
                else:  # BPF_JSET
                    taken = (A & v) != 0
                pc += jt if taken else jf
            elif cls == BPF_RET:
                return A if code & BPF_A else k
            else:  # BPF_MISC
                if code & 0xf8 == BPF_TAX:
                    X = A
                else:
                    A = X

    @staticmethod
    def _load_mem(mem, k, pc):
        if mem[k] is None:
            raise BpfError("instruction %d reads scratch slot %d before any store" % (pc, k))
        return mem[k]

    def returns(self):
        """Every constant a RET K in the program can return."""
        return {k for code, _, _, k in self.insns if code == BPF_RET | BPF_K}

    # -- reading it --

    def disassemble_one(self, pc):
        code, jt, jf, k = self.insns[pc]
        cls, mode, op = code & 0x07, code & 0xe0, code & 0xf0
        src = "x" if code & BPF_X else "#%#x" % k
        if code == BPF_LD | BPF_W | BPF_ABS:
            return "ld [%d]" % k
        if code == BPF_LD | BPF_IMM:
            return "ld #%#x" % k
        if code == BPF_LD | BPF_W | BPF_LEN:
            return "ld #len"
        if code == BPF_LD | BPF_MEM:
            return "ld M[%d]" % k
        if code == BPF_LDX | BPF_IMM:
            return "ldx #%#x" % k
        if code == BPF_LDX | BPF_W | BPF_LEN:
            return "ldx #len"
        if code == BPF_LDX | BPF_MEM:
            return "ldx M[%d]" % k
        if code == BPF_ST:
            return "st M[%d]" % k
        if code == BPF_STX:
            return "stx M[%d]" % k
        if code == BPF_ALU | BPF_NEG:
            return "neg"
        if cls == BPF_ALU and op in _ALU_OPS and not code > 0xff:
            return "%s %s" % (_ALU_OPS[op], src)
        if code == BPF_JMP | BPF_JA:
            return "ja %d" % (pc + 1 + k)
        if cls == BPF_JMP and op in _JMP_OPS and not code > 0xff:
            return "%s %s, %d, %d" % (_JMP_OPS[op], src, pc + 1 + jt, pc + 1 + jf)
        if code == BPF_RET | BPF_K:
            return "ret %s" % describe(k)
        if code == BPF_RET | BPF_A:
            return "ret a"
        if code == BPF_MISC | BPF_TAX:
            return "tax"
        if code == BPF_MISC | BPF_TXA:
            return "txa"
        return "<unknown opcode %#06x mode %#x>" % (code, mode)

    def disassemble(self):
        return "\n".join("%4d: %s" % (pc, self.disassemble_one(pc)) for pc in range(len(self)))


def _precedence(ret):
    """Lower sorts first: the kernel keeps the filter result whose action,
    read as a signed 32-bit number, is smallest (kernel/seccomp.c,
    seccomp_run_filters: KILL_PROCESS, KILL_THREAD, TRAP, ERRNO,
    USER_NOTIF, TRACE, LOG, ALLOW)."""
    action = ret & SECCOMP_RET_ACTION_FULL
    return action - (1 << 32) if action & 0x80000000 else action


class Stack:
    """Filters installed one after another on a thread: every one runs on
    each system call and the highest-precedence result wins."""

    def __init__(self, *programs):
        self.programs = programs

    def run(self, nr, arch=AUDIT_ARCH_X86_64, args=(), ip=0):
        rets = [p.run(nr, arch, args, ip) for p in self.programs]
        return min(rets, key=_precedence)
