/* The double-dummy search kernel: engine/dd.py's algorithm in C99, no dependencies.
 *
 * engine/dd.py (the Python solver) is the specification: this file searches the same way
 * (a boolean "can the counted seats take k or more of the tricks left?" alpha-beta, one card
 * of each run of equivalent cards, ordered moves, sure-trick bounds at trick starts) and must
 * give exactly its values; tests/engine/test_ddcore.py checks that on random positions of
 * every variant. Its sure-trick bounds are stronger (the trumps of every seat: `trumps`) and
 * its ordering finer; a property test holds the bounds under the exact values. Its transposition table goes further than the reference's (exact relative ranks):
 * it is a partition search's (Ginsberg; Haglund's DDS for bridge), an entry holding for every
 * position of the same suit lengths whose cards that decided the search (a trick's winner
 * that beat a card of its suit, the top cards counted as sure tricks) and every higher card
 * of their suits are held by the same seats. engine/ddcore.py loads it with ctypes; `make install` builds it:
 *
 *     cc -O2 -std=c99 -shared -fPIC -o engine/_ddcore.so engine/ddcore.c
 *
 * Cards are bits of a 64-bit mask: effective suit s (clubs, diamonds, hearts, spades = trumps)
 * holds bits 16 s .. 16 s + 15, in increasing power, so within a suit a higher bit is a
 * higher card and every trump bit is above every other suit's. Nothing from the caller is
 * trusted: dd_value and dd_at_least check the position (seats, card counts, disjoint hands,
 * the trick) before searching and return a negative code when it is not one.
 */

#if defined(__GNUC__) && !defined(__clang__)
/* GCC's -O3 for this file whatever the build asks (`make install` and the image's builder
 * compile it with -O2): its inlining and loop transformations of the trick start and the
 * table's walk cost 6-14% less CPU a node on the benchmark's deals, with the same nodes. */
#pragma GCC optimize("O3")
#endif
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and madvise under -std=c99 */
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef uint64_t u64;

#define MAXP 5           /* players at most */
#define MAXT 18          /* tricks at most: 54 cards, 3 players */
#define SUITW 16
#define SPADES 3
#ifndef LIST_MAX
#define LIST_MAX 1024 /* entries a class of the table keeps at most */
#endif
#ifndef BLOCK
#define BLOCK 12 /* entries of a class stored side by side (the unit of allocation) */
#endif
#define SUIT(s) ((u64)0xFFFF << ((s) * SUITW))
#ifndef KILLER
#define KILLER 50000
#endif

/* The first trick's special leads (Ruleset.first_lead). */
enum { FIRST_NONE = 0, FIRST_TWO_OF_CLUBS = 1, FIRST_ANY = 2, FIRST_LOWEST_CLUB = 3 };

/* Errors (negative returns). */
enum {
    DD_BAD_SOLVER = -1,
    DD_BAD_SEAT = -2,
    DD_BAD_CARDS = -3,
    DD_BAD_TRICK = -4,
    DD_TOO_BIG = -5,
    DD_OVER_BUDGET = -6,
};

/* Counters of what the search did, for tuning (dd_stats; engine.ddcore.Solver.stats names
 * them in this order). */
enum {
    ST_LOOKUPS,   /* trick starts looked up in the table */
    ST_WALKED,    /* entries compared in those lookups */
    ST_HITS,      /* lookups the table settled */
    ST_SURE,      /* trick starts the sure-trick bounds settled */
    ST_STORES,    /* results stored */
    ST_NEW,       /* of which in a new entry */
    ST_EVICTED,   /* entries dropped to make room in a full class */
    ST_RESETS,    /* times the whole table was emptied (no room left) */
    DD_NSTATS
};

/* The transposition table (partition search). Positions are grouped in classes: the same
 * leader, spades state and suit lengths per seat. An entry of a class holds bounds valid for
 * every position of the class whose top cards of each suit, down to the lowest that mattered
 * to the search, are held by the same seats. Ranks are relative (renumbered among the live
 * cards of each suit, lowest 0), so ``mask`` (the relative ranks that mattered: per suit a top
 * run) and ``seats`` (the seat holding each relative rank among them, a bit of the seat's number
 * per word) compare alike across the class, every class having the same live ranks. */
typedef struct {
    u64 mask;       /* the relative ranks whose holders decided the bounds */
    u64 seats[3];   /* bit j of the holder's seat number for each rank of ``mask`` */
} Key;

/* A class's entries sit in blocks of BLOCK, newest block first: a lookup reads them in order
 * from contiguous memory (a list of single entries scattered over the pool cost a cache miss
 * an entry, which is what bounded a class to 64 entries before). */
typedef struct {
    /* What a lookup reads of every block: its first cache line (a block is 512 bytes, the
     * pool aligned to 64). */
    uint32_t next, prev; /* the class's older and newer blocks (0: none) */
    int32_t count;       /* entries in use */
    uint32_t next2;      /* the block after ``next`` (0: none), fetched ahead by a lookup */
    uint32_t top[BLOCK]; /* the holders its key asks of the two top cards of each suit */
    /* What it reads of an entry that passed ``top``. */
    Key key[BLOCK];
    int8_t lo[BLOCK], hi[BLOCK]; /* bounds on the counted seats' tricks from here */
    uint8_t hint[BLOCK]; /* 1 + the relative rank (bit) of the lead that settled it; 0: none */
    uint8_t pad[512 - 16 - 4 * BLOCK - 32 * BLOCK - 3 * BLOCK];
} Block;

typedef struct {
    u64 lens[2];    /* per seat and suit, its length (5 bits each) */
    uint32_t head;  /* its newest block (0: none) */
    uint32_t tail;  /* its oldest block */
    uint16_t count; /* entries */
    uint8_t meta;   /* 1 + leader | broken << 3 | first << 4; 0 = empty slot */
    uint8_t turn;   /* the slot of the newest block a promoted entry takes next */
} Class;

typedef struct {
    int n;
    int counted[MAXP];
    int maxi[MAXP];
    int aligned;
    int first_mode;
    int club2;      /* the bit of the two of clubs (FIRST_TWO_OF_CLUBS), else -1 */
    u64 hands[MAXP];
    Class *classes;  /* open addressing */
    size_t class_mask; /* slots - 1 (a power of two) */
    size_t nclasses;
    Block *pool;       /* blocks; 0 unused (the end of a list) */
    void *pool_memory; /* what was allocated for it (pool aligned to a cache line) */
    int classes_mapped, pool_mapped; /* whether big_alloc mapped them (big_free) */
    uint32_t pool_size, pool_used;
    int list_max; /* entries a class keeps: LIST_MAX, less in a small table (a 64th, 1 at least) */
    u64 nodes;
    u64 limit;   /* nodes a call may search (0: no limit) */
    int aborted; /* the limit was reached: unwind without storing anything */
    u64 stats[DD_NSTATS]; /* what the table and the bounds did (dd_stats) */
    u64 killer[MAXT + 1][2]; /* per tricks left and side, the last lead that settled a start */
} Solver;

#if defined(__GNUC__) || defined(__clang__)
#if defined(__POPCNT__) || !(defined(__x86_64__) || defined(__i386__))
static int popcount(u64 x) { return __builtin_popcountll(x); }
#else
/* Without -mpopcnt the builtin is a call into libgcc: count in registers instead. */
static int popcount(u64 x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}
#endif
static int bitindex(u64 b) { return __builtin_ctzll(b); } /* b != 0 */
static u64 highest(u64 x) { return (u64)1 << (63 - __builtin_clzll(x)); } /* x != 0 */
#else
static int popcount(u64 x) {
    int c = 0;
    while (x) {
        x &= x - 1;
        c++;
    }
    return c;
}
static int bitindex(u64 b) {
    int i = 0;
    while (!(b & 1)) {
        b >>= 1;
        i++;
    }
    return i;
}
static u64 highest(u64 x) {
    while (x & (x - 1)) x &= x - 1;
    return x;
}
#endif

static u64 mix(u64 x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The table's memory, zeroed: where the system has them, in huge pages (the search reads
 * the table at random, and with 4 KiB pages nearly every lookup also missed the TLB), else
 * from calloc. ``*mapped`` says which, for big_free. */
static void *big_alloc(size_t bytes, int *mapped) {
    *mapped = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
        madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without it the pages are small */
        *mapped = 1;
        return p;
    }
#endif
    return calloc(1, bytes);
}

static void big_free(void *p, size_t bytes, int mapped) {
    if (!p) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (mapped) {
        munmap(p, bytes);
        return;
    }
#endif
    (void)bytes;
    (void)mapped;
    free(p);
}

void dd_free(void *p);

void *dd_new(int n, int counted_mask, int maxi_mask, int first_mode, int club2, int tt_log2) {
    if (n < 2 || n > MAXP || first_mode < 0 || first_mode > 3 || club2 < -1 || club2 > 63)
        return NULL;
    if (tt_log2 < 4 || tt_log2 > 26) return NULL;
    Solver *s = calloc(1, sizeof(Solver));
    if (!s) return NULL;
    s->n = n;
    for (int i = 0; i < n; i++) {
        s->counted[i] = (counted_mask >> i) & 1;
        s->maxi[i] = (maxi_mask >> i) & 1;
    }
    s->aligned = 1;
    for (int i = 0; i < n; i++)
        if (s->counted[i] != s->maxi[i]) s->aligned = 0;
    s->first_mode = first_mode;
    s->club2 = club2;
    s->class_mask = ((size_t)1 << tt_log2) - 1;
    s->classes = big_alloc((s->class_mask + 1) * sizeof(Class), &s->classes_mapped);
    s->pool_size = ((uint32_t)1 << tt_log2) / BLOCK;
    s->pool_used = 1;
    s->list_max = ((int)1 << tt_log2) / 64 < LIST_MAX ? ((int)1 << tt_log2) / 64 : LIST_MAX;
    if (s->list_max < 1) s->list_max = 1; /* tests' tiny tables: classes fill up at once */
    s->pool_memory = big_alloc((s->pool_size + 1) * sizeof(Block), &s->pool_mapped);
    s->pool = (Block *)(((uintptr_t)s->pool_memory + 63) & ~(uintptr_t)63);
    if (!s->classes || !s->pool_memory) {
        dd_free(s);
        return NULL;
    }
    return s;
}

void dd_free(void *p) {
    Solver *s = p;
    if (!s) return;
    big_free(s->classes, (s->class_mask + 1) * sizeof(Class), s->classes_mapped);
    big_free(s->pool_memory, (s->pool_size + 1) * sizeof(Block), s->pool_mapped);
    free(s);
}

u64 dd_nodes(void *p) { return p ? ((Solver *)p)->nodes : 0; }

/* Copy at most ``n`` of the counters (the ST_ order) to ``out``; return how many there are. */
int dd_stats(void *p, u64 *out, int n) {
    Solver *s = p;
    if (!s || !out || n < 0) return DD_BAD_SOLVER;
    for (int j = 0; j < n && j < DD_NSTATS; j++) out[j] = s->stats[j];
    return DD_NSTATS;
}

/* Limit each later call to ``budget`` more nodes (0: no limit); over it, a call returns
 * DD_OVER_BUDGET and the table keeps only what completed searches found. */
void dd_set_budget(void *p, u64 budget) {
    Solver *s = p;
    if (s) s->limit = budget;
}

/* Each suit's length in a 16-bit lane of its own (a lane's count in its low 5 bits). */
static u64 lane_counts(u64 x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x + (x >> 8)) & 0x001F001F001F001FULL;
}

/* The key's holders: bit j of seats[w] is bit w of the number of the seat holding the live
 * card of relative rank j (its suit's cards renumbered by rank among the live ones, lowest
 * 0). One pass over the live cards, without a branch on who holds each. */
static void holders(const Solver *s, u64 alive, u64 *seats) {
    u64 u[3] = {0, 0, 0};
    for (int p = 1; p < s->n; p++)
        for (int w = 0; w < 3; w++)
            if (p >> w & 1) u[w] |= s->hands[p];
    u64 s0 = 0, s1 = 0, s2 = 0;
    for (int suit = 0; suit < 4; suit++) {
        u64 live = alive & SUIT(suit);
        int j = suit * SUITW;
        while (live) {
            u64 low = live & (~live + 1);
            live ^= low;
            s0 |= (u64)((u[0] & low) != 0) << j;
            s1 |= (u64)((u[1] & low) != 0) << j;
            s2 |= (u64)((u[2] & low) != 0) << j;
            j++;
        }
    }
    seats[0] = s0;
    seats[1] = s1;
    seats[2] = s2;
}

/* The lengths of every seat's suits, five bits each (seat p's at bit 20 p), in two words. */
static void lengths(const Solver *s, u64 *lens) {
    lens[0] = lens[1] = 0;
    for (int p = 0; p < s->n; p++) {
        u64 c = lane_counts(s->hands[p]);
        u64 packed = (c & 0x1F) | (c >> 16 & 0x1F) << 5 | (c >> 32 & 0x1F) << 10 |
                     (c >> 48 & 0x1F) << 15;
        lens[p / 3] |= packed << (p % 3 * 20);
    }
}

/* Where a class's search for its slot starts. */
static size_t class_slot(const Solver *s, const u64 *lens, uint8_t meta) {
    return (size_t)mix(mix(lens[0] ^ meta) ^ lens[1]) & s->class_mask;
}

/* The class of a position (NULL: none, or no room for a new one). */
static Class *find_class(Solver *s, const u64 *lens, uint8_t meta, int create) {
    size_t i = class_slot(s, lens, meta);
    for (;; i = (i + 1) & s->class_mask) {
        Class *c = &s->classes[i];
        if (!c->meta) break;
        if (c->meta == meta && c->lens[0] == lens[0] && c->lens[1] == lens[1]) return c;
    }
    if (!create || 4 * (s->nclasses + 1) > 3 * (s->class_mask + 1)) return NULL;
    Class *c = &s->classes[i];
    c->lens[0] = lens[0];
    c->lens[1] = lens[1];
    c->meta = meta;
    c->head = c->tail = 0;
    c->count = 0;
    c->turn = 0;
    s->nclasses++;
    return c;
}

/* A key's holders of the two top live cards of each suit, a nibble each: the seat's number,
 * or 8 where the key does not ask (not in ``mask``). A lookup compares these first (fits),
 * twelve entries a cache line, and reads the keys of the few that pass. */
static uint32_t topcode(const u64 *seats, u64 mask, const int *slen) {
    uint32_t code = 0x88888888u;
    for (int suit = 0; suit < 4; suit++)
        for (int t = 0; t < 2 && t < slen[suit]; t++) {
            int j = suit * SUITW + slen[suit] - 1 - t;
            if (!(mask >> j & 1)) continue;
            uint32_t holder = (uint32_t)((seats[0] >> j & 1) | (seats[1] >> j & 1) << 1 |
                                         (seats[2] >> j & 1) << 2);
            code ^= (8u ^ holder) << (4 * (2 * suit + t));
        }
    return code;
}

/* Whether an entry's topcode ``e`` allows a position's ``q`` (every nibble equal or 8). */
static int fits(uint32_t e, uint32_t q) {
    uint32_t any = ((e & 0x88888888u) >> 3) * 0xFu;
    return !((e ^ q) & ~any);
}

static int matches(const Key *e, const u64 *seats) {
    return !(((seats[0] ^ e->seats[0]) | (seats[1] ^ e->seats[1]) | (seats[2] ^ e->seats[2])) &
             e->mask);
}

/* The live cards of each suit at or above the lowest card of ``rel`` in it. */
static u64 closed(u64 rel, u64 alive) {
    u64 out = 0;
    for (int suit = 0; suit < 4; suit++) {
        u64 r = rel & SUIT(suit);
        if (r) out |= alive & SUIT(suit) & ~((r & (~r + 1)) - 1);
    }
    return out;
}

/* ``cards`` (live cards, absolute bits) as relative ranks, and back. */
static u64 to_relative(u64 cards, u64 alive) {
    u64 out = 0;
    for (int suit = 0; suit < 4; suit++) {
        u64 live = alive & SUIT(suit);
        int j = suit * SUITW;
        while (live) {
            u64 low = live & (~live + 1);
            live ^= low;
            if (cards & low) out |= (u64)1 << j;
            j++;
        }
    }
    return out;
}

static u64 to_absolute(u64 rel, u64 alive) {
    u64 out = 0;
    for (int suit = 0; suit < 4; suit++) {
        u64 live = alive & SUIT(suit);
        u64 r = rel & SUIT(suit);
        int j = suit * SUITW;
        while (live && r) {
            u64 low = live & (~live + 1);
            live ^= low;
            u64 at = (u64)1 << j;
            if (r & at) {
                out |= low;
                r ^= at;
            }
            j++;
        }
    }
    return out;
}

/* Record bounds valid for every position sharing ``mask`` (relative) with this one (merged
 * with an entry of exactly that class), and the lead to try first. A full table is emptied. */
static void reset(Solver *s) {
    s->stats[ST_RESETS]++;
    memset(s->classes, 0, sizeof(Class) * (s->class_mask + 1));
    s->nclasses = 0;
    s->pool_used = 1;
}

/* A block for a new entry of ``c``: the newest block while it has room, else a new one,
 * else (the class full, or the pool) the class's oldest block emptied and made its newest. */
static Block *room(Solver *s, Class *c) {
    if (c->head && s->pool[c->head].count < BLOCK && c->count < s->list_max)
        return &s->pool[c->head];
    uint32_t i;
    if (c->tail && (c->count + BLOCK > s->list_max || s->pool_used == s->pool_size)) {
        i = c->tail; /* the oldest entries make room */
        Block *b = &s->pool[i];
        s->stats[ST_EVICTED] += b->count;
        c->count = (uint16_t)(c->count - b->count);
        if (i == c->head) {
            b->count = 0;
            return b;
        }
        c->tail = b->prev;
        s->pool[c->tail].next = 0;
        s->pool[s->pool[c->tail].prev].next2 = 0; /* (block 0, the end, if none) */
    } else {
        if (s->pool_used == s->pool_size) return NULL;
        i = s->pool_used++;
        if (!c->tail) c->tail = i;
    }
    Block *b = &s->pool[i];
    b->count = 0;
    b->prev = 0;
    b->next = c->head;
    b->next2 = c->head ? s->pool[c->head].next : 0;
    if (c->head) s->pool[c->head].prev = i;
    c->head = i;
    c->turn = 0;
    return b;
}

static void store(Solver *s, const u64 *seats, const u64 *lens, const int *slen, uint8_t meta,
                  int left, u64 mask, int lo, int hi, uint8_t hint) {
    Class *c = find_class(s, lens, meta, 1);
    if (!c) {
        reset(s);
        c = find_class(s, lens, meta, 1);
    }
    s->stats[ST_STORES]++;
    Block *b = NULL;
    int j = 0;
    uint32_t top = topcode(seats, mask, slen);
    for (uint32_t i = c->head; i && !b; i = s->pool[i].next) {
        Block *x = &s->pool[i];
        for (int m = 0; m < x->count; m++)
            if (x->top[m] == top && x->key[m].mask == mask && matches(&x->key[m], seats)) {
                b = x;
                j = m;
                break;
            }
    }
    if (!b) {
        s->stats[ST_NEW]++;
        b = room(s, c);
        if (!b) { /* no block left in the pool: start again */
            reset(s);
            c = find_class(s, lens, meta, 1);
            b = room(s, c);
        }
        j = b->count++;
        c->count++;
        b->top[j] = top;
        b->key[j].mask = mask;
        for (int w = 0; w < 3; w++) b->key[j].seats[w] = seats[w] & mask;
        b->lo[j] = 0;
        b->hi[j] = (int8_t)left;
        b->hint[j] = 0;
    }
    if (b->lo[j] > lo) lo = b->lo[j];
    if (b->hi[j] < hi) hi = b->hi[j];
    b->lo[j] = (int8_t)lo;
    b->hi[j] = (int8_t)hi;
    if (hint) b->hint[j] = hint;
}

/* The tricks seat ``who`` can take at once with top cards whatever the others play once he is
 * on lead (dd.py's _quick): per suit the run of top live cards he holds, cut to the shortest
 * holding of an opponent who could ruff; spades only once they may be led. A partner holding
 * spades could be forced to ruff a winner (and take the lead) once out of other cards: the
 * total is cut to each such partner's other cards. The top cards counted are added to *used:
 * with the same lengths, a position where the same seats hold them has at least as many quick
 * tricks. ``cross`` (a plain suit, else -1) is a suit whose top card ``who`` holds and the
 * leader, his partner, leads to it: the crossing trick is the first of that suit's run. */
static int cash(const Solver *s, int who, int cross, int broken, u64 alive, int *plain,
                u64 *used) {
    const u64 *hands = s->hands;
    u64 h = hands[who];
    int side = s->maxi[who];
    int total = 0, spade_run = 0;
    for (int suit = 0; suit < 4; suit++) {
        u64 mine = h & SUIT(suit);
        if (!mine) continue;
        u64 live = alive & SUIT(suit);
        int run = 0;
        while (live) {
            u64 top = highest(live);
            if (!(top & mine)) break;
            run++;
            live ^= top;
            *used |= top;
        }
        if (!run) continue;
        if (suit == SPADES) {
            if (broken || !(h & ~SUIT(SPADES))) spade_run = run;
            continue;
        }
        for (int p = 0; p < s->n; p++) {
            if (s->maxi[p] == side || !(hands[p] & SUIT(SPADES))) continue;
            int length = popcount(hands[p] & SUIT(suit));
            if (length < run) run = length;
        }
        if (suit == cross && !run) return -1; /* an opponent could ruff the crossing */
        total += run;
    }
    for (int p = 0; p < s->n; p++) {
        if (p == who || s->maxi[p] != side || !(hands[p] & SUIT(SPADES))) continue;
        int other = popcount(hands[p] & ~SUIT(SPADES));
        if (other < total) total = other;
    }
    *plain = total;
    return total + spade_run;
}

static int quick(const Solver *s, int leader, int broken, u64 alive, int *plain, u64 *used) {
    return cash(s, leader, -1, broken, alive, plain, used);
}

static int start(Solver *s, int leader, int broken, int k, int left, int first, u64 *rel);

/* The tricks side ``side`` (maxi) takes sooner or later with its trumps. Each of a seat's
 * spades falls in a trick of its own, which the side wins unless a higher spade of the other
 * side falls in it too, a spade that then beats no other of the seat's: the side takes at
 * least the seat's spades less the most of them the other side's spades could be matched
 * with, each to one lower (counted from the top: a spade of the seat unmatched when no
 * higher spade of theirs is left over). The most of any seat. *mark gets the lowest
 * unmatched spade counted: where the same seats hold it and every spade above it, with the
 * same lengths, the seat's spades from it up meet the same spades of theirs above them. */
static int trumps(const Solver *s, int side, u64 alive, u64 *mark) {
    u64 other = 0;
    for (int p = 0; p < s->n; p++)
        if (s->maxi[p] != side) other |= s->hands[p] & SUIT(SPADES);
    int most = 0;
    *mark = 0;
    for (int p = 0; p < s->n; p++) {
        u64 own = s->hands[p] & SUIT(SPADES);
        if (s->maxi[p] != side || !own) continue;
        u64 x = (own | other) & alive;
        int spare = 0, free = 0;
        u64 last = 0;
        while (own & x) {
            u64 top = highest(x);
            x ^= top;
            if (top & other)
                spare++;
            else if (spare)
                spare--;
            else {
                free++;
                last = top;
            }
        }
        if (free > most) {
            most = free;
            *mark = last;
        }
    }
    return most;
}

/* Sure tricks (counted seats = maximizers only): *mine gets tricks the maximizers take
 * whatever happens, *theirs the others'; used[0] and used[1] the cards that decided each
 * (with the same lengths, a position where the same seats hold them and every higher card of
 * their suits has at least as many). The leader's quick tricks, and each side's trumps.
 * It stops as soon as the maximizers are sure of ``k`` of the ``left`` tricks or cannot reach
 * k (every later bound would only mark more cards); the tests' dd_sure asks for all. */
static void sure(Solver *s, int leader, int broken, int first, u64 alive, int k, int left,
                 int *mine, int *theirs, u64 *used) {
    *theirs = 0;
    *mine = trumps(s, 1, alive, &used[0]);
    if (*mine >= k) return; /* settled: the rest could only add to the cards marked */
    *theirs = trumps(s, 0, alive, &used[1]);
    if (left - *theirs < k) return;
    /* Where the first trick's cards are forced (the two of clubs led, every lowest club
     * played), the leader cannot cash anything: the forced trick may give the lead away, so
     * neither bound below holds there (a fuzz against brute force found the quick tricks
     * off by one on 4-card first tricks). The trumps above still hold. */
    if (first && (s->first_mode == FIRST_TWO_OF_CLUBS || s->first_mode == FIRST_LOWEST_CLUB))
        return;
    /* The leader's side cashes its plain-suit winners first (no opponent can ruff them, no
     * partner has to: no spade falls), then its trumps still count as before. */
    int plain;
    u64 top = 0;
    int q = quick(s, leader, broken, alive, &plain, &top);
    int at = s->maxi[leader] ? 0 : 1;
    int *side = at ? theirs : mine;
    if (plain + *side > q) q = plain + *side;
    /* A bound that settles the start is kept as it is: a larger one would mark more cards. */
#define SETTLES(x) (at ? left - (x) < k : (x) >= k)
    if (SETTLES(q)) goto done;
    /* Or he leads a plain suit to a partner's top card of it and the partner cashes his
     * (the crossing trick the first of that suit's run; not where the first lead is free
     * either: "any" lets the first lead be a spade, and the crossing assumes it is not). */
    if (!(first && s->first_mode != FIRST_NONE)) {
        for (int p = 0; p < s->n; p++) {
            if (p == leader || s->maxi[p] != s->maxi[leader]) continue;
            for (int suit = 0; suit < SPADES; suit++) {
                u64 live = alive & SUIT(suit);
                if (!(s->hands[leader] & live) || !(s->hands[p] & live & highest(live)))
                    continue;
                u64 top2 = 0;
                int plain2, q2 = cash(s, p, suit, broken, alive, &plain2, &top2);
                if (q2 < 0) continue;
                if (plain2 + *side > q2) q2 = plain2 + *side;
                if (q2 > q) {
                    q = q2;
                    top = top2;
                    if (SETTLES(q)) goto done;
                }
            }
        }
    }
#undef SETTLES
done:
    if (q > *side) {
        *side = q;
        used[at] |= top;
    }
}

static u64 first_legal(const Solver *s, u64 h, int i, int led) {
    u64 legal;
    if (s->first_mode == FIRST_LOWEST_CLUB) {
        u64 clubs = h & SUIT(0);
        if (clubs) return clubs & (~clubs + 1);
        if (i && (h & SUIT(led))) return h & SUIT(led);
        legal = h & ~SUIT(SPADES);
        return legal ? legal : h;
    }
    if (i) {
        legal = h & SUIT(led);
        return legal ? legal : h;
    }
    if (s->first_mode == FIRST_TWO_OF_CLUBS && s->club2 >= 0) {
        legal = h & ((u64)1 << s->club2);
        return legal ? legal : h;
    }
    return h; /* FIRST_ANY: the first lead is free */
}

/* Move ordering: each card a score, the highest tried first.
 * Leads: the lead that settled this position before, then the killer (the last lead that
 * settled a trick's start with as many tricks left for the same side: the bisection asks the
 * same positions for several targets, and sibling positions are often won by the same card),
 * then winners (the top live card of a
 * suit, more so when no opponent can ruff it), then plain leads a partner can ruff or
 * toward a partner's top card, last the ones an opponent can ruff.
 * Follows: an opponent winning, the cheapest card that beats him (when no opponent plays
 * after, else the top); a partner winning or no winner, the lowest card, discarding from
 * the suit where it is lowest. */
static void order(Solver *s, u64 *reps, int nr, int i, int seat, u64 alive, int led, u64 best,
                  int winner, u64 hint, u64 killer) {
    int score[64];
    int side = s->maxi[seat];
    for (int j = 0; j < nr; j++) {
        u64 b = reps[j];
        int bit = bitindex(b);
        int suit = bit / SUITW;
        u64 in_suit = alive & SUIT(suit);
        int below = popcount(in_suit & (b - 1)); /* live cards of its suit below it */
        int above = (b >> 63) ? 0 : popcount(in_suit & ~((b << 1) - 1));
        int sc = 0;
        (void)bit;
        if (sc > 400) sc = 400;
        if (i == 0) {
            if (b == hint) sc += 100000;
            if (b == killer) sc += KILLER;
            if (above == 0) {
                sc += 2000;
                if (suit != SPADES) {
                    int safe = 1;
                    for (int p = 0; p < s->n; p++)
                        if (s->maxi[p] != side && !(s->hands[p] & SUIT(suit)) &&
                            (s->hands[p] & SUIT(SPADES)))
                            safe = 0;
                    if (safe) sc += 1000;
                }
            }
            else if (suit != SPADES) {
                /* A plain lead that is not a winner: better where a partner void in the suit
                 * can ruff it, worse where an opponent can. */
                for (int p = 0; p < s->n; p++) {
                    if (p == seat || (s->hands[p] & SUIT(suit)) || !(s->hands[p] & SUIT(SPADES)))
                        continue;
                    sc += s->maxi[p] == side ? 200 : -300;
                }
                /* And better toward a partner's top card of the suit. */
                u64 top = highest(in_suit);
                for (int p = 0; p < s->n; p++)
                    if (p != seat && s->maxi[p] == side && (s->hands[p] & top)) sc += 100;
            }
        } else {
            int wins = (b & (SUIT(led) | SUIT(SPADES))) && b > best;
            if (s->maxi[winner] != side && wins) {
                int later_opp = 0;
                for (int q = i + 1; q < s->n; q++)
                    if (s->maxi[(seat + q - i) % s->n] != side) later_opp = 1;
                sc += 5000 + (later_opp && above == 0 ? 500 : 0) - below;
            } else {
                sc += 1000 - 20 * below - (suit == SPADES ? 200 : 0);
            }
        }
        score[j] = sc;
    }
    for (int j = 1; j < nr; j++) { /* insertion sort, stable, highest first */
        u64 b = reps[j];
        int sc = score[j], m = j;
        while (m > 0 && score[m - 1] < sc) {
            reps[m] = reps[m - 1];
            score[m] = score[m - 1];
            m--;
        }
        reps[m] = b;
        score[m] = sc;
    }
}

/* Whether the counted seats reach k, ``seat`` playing the i-th card of the trick (``best``
 * the winning card's bit so far, of ``winner``; ``trick`` the cards on it). At i == 0, *cut
 * gets the lead that settled it (0 if none) and ``hint`` is tried first. *rel gets the cards
 * whose holders decided the answer (partition search): a trick's winner when it beat a card
 * of its own suit, and what the positions after it found; of a side that found its move, that
 * move's alone, else every move's. runs[0] gets the cards of the runs of equivalent cards
 * only one of which was searched where every move failed, runs[1] the lowest of each. */
static int play(Solver *s, int i, int seat, int leader, int broken, int k, int left, u64 alive,
                int led, u64 best, int winner, u64 trick, int first, u64 hint, u64 *cut,
                u64 *rel, u64 *runs) {
    *rel = 0;
    runs[0] = runs[1] = 0;
    s->nodes++;
    if (s->limit && s->nodes > s->limit) {
        s->aborted = 1;
        return 0;
    }
    u64 h = s->hands[seat];
    u64 legal;
    if (first && s->first_mode != FIRST_NONE)
        legal = first_legal(s, h, i, led);
    else if (i) {
        legal = h & SUIT(led);
        if (!legal) legal = h;
    } else if (broken)
        legal = h;
    else {
        legal = h & ~SUIT(SPADES);
        if (!legal) legal = h;
    }
    /* One card of each run of equivalent cards (the highest). */
    u64 reps[64];
    int nr = 0;
    u64 x = legal;
    while (x) {
        u64 low = x & (~x + 1);
        x ^= low;
        u64 above = alive & ~((low << 1) - 1);
        if (low >> 63) above = 0;
        u64 next = above & (~above + 1);
        if (!(next & legal & SUIT(bitindex(low) / SUITW))) reps[nr++] = low;
    }
    int maxi = s->maxi[seat];
    if (nr > 1)
        order(s, reps, nr, i, seat, alive, led, best, winner, hint,
              i == 0 ? s->killer[left][maxi] : 0);
    int last = i == s->n - 1;
    int nxt = (seat + 1) % s->n;
    u64 beats = i ? SUIT(led) | SUIT(SPADES) : 0;
    u64 all = 0, allruns[2] = {0, 0};
    for (int j = 0; j < nr; j++) {
        u64 b = reps[j];
        int led2 = led, winner2 = winner;
        u64 best2 = best;
        s->hands[seat] = h ^ b;
        if (i == 0) {
            led2 = bitindex(b) / SUITW;
            best2 = b;
            winner2 = seat;
        } else if (b > best && (b & beats)) {
            best2 = b;
            winner2 = seat;
        }
        int broken2 = broken || (b & SUIT(SPADES)) != 0;
        int found;
        u64 sub, subruns[2] = {0, 0};
        if (last) {
            found = start(s, winner2, broken2, k - s->counted[winner2], left - 1, 0, &sub);
            u64 suit = SUIT(bitindex(best2) / SUITW);
            if (popcount((trick | b) & suit) > 1) sub |= best2; /* won by its rank */
        } else
            found = play(s, i + 1, nxt, leader, broken2, k, left, alive, led2, best2, winner2,
                         trick | b, first, 0, NULL, &sub, subruns);
        s->hands[seat] = h;
        if (s->aborted) return 0;
        if (found == maxi) {
            if (!i && cut) *cut = b;
            if (!i) s->killer[left][maxi] = b;
            *rel = sub;
            runs[0] = subruns[0];
            runs[1] = subruns[1];
            return found;
        }
        all |= sub;
        allruns[0] |= subruns[0];
        allruns[1] |= subruns[1];
    }
    if (!i && cut) *cut = 0;
    /* Every move failed, the ones not searched because equivalent to a move searched
     * included. In a position of the same class they stay equivalent unless the run is cut
     * by the boundary of the cards that matter: the trick's start sees to that (runs). */
    for (int j = 0; j < nr; j++) {
        u64 c = reps[j], suit = SUIT(bitindex(c) / SUITW), members = c;
        for (;;) {
            u64 below = alive & suit & (c - 1);
            if (!below || !(highest(below) & legal)) break;
            c = highest(below);
            members |= c;
        }
        if (c != reps[j]) {
            allruns[0] |= members;
            allruns[1] |= c;
        }
    }
    runs[0] = allruns[0];
    runs[1] = allruns[1];
    *rel = all;
    return !maxi;
}

static int start(Solver *s, int leader, int broken, int k, int left, int first, u64 *rel) {
    *rel = 0;
    if (k <= 0) return 1;
    if (k > left) return 0;
    u64 alive = 0;
    for (int p = 0; p < s->n; p++) alive |= s->hands[p];
    if (s->aligned) {
        int mine, theirs;
        u64 used[2];
        sure(s, leader, broken, first, alive, k, left, &mine, &theirs, used);
        if (mine >= k || left - theirs < k) {
            s->stats[ST_SURE]++;
            *rel = used[mine >= k ? 0 : 1];
            return mine >= k;
        }
    }
    u64 lens[2], seats[3];
    lengths(s, lens);
    uint8_t meta = (uint8_t)(1 + (leader | (broken ? 8 : 0) | (first ? 16 : 0)));
#if defined(__GNUC__) || defined(__clang__)
    /* The class's slot is a cache miss: ask for it before the holders are worked out. */
    __builtin_prefetch(&s->classes[class_slot(s, lens, meta)]);
#endif
    holders(s, alive, seats);
    Class *c = find_class(s, lens, meta, 0);
    u64 hint = 0;
    int slen[4];
    u64 counts = lane_counts(alive);
    for (int suit = 0; suit < 4; suit++) slen[suit] = (int)(counts >> (suit * SUITW) & 0x1F);
    uint32_t q = topcode(seats, ~(u64)0, slen);
    s->stats[ST_LOOKUPS]++;
    for (uint32_t i = c ? c->head : 0; i; i = s->pool[i].next) {
        Block *b = &s->pool[i];
#if defined(__GNUC__) || defined(__clang__)
        /* The list is walked a block at a time, each a cache miss: ask for two ahead. */
        if (b->next) __builtin_prefetch(&s->pool[b->next]);
        if (b->next2) __builtin_prefetch(&s->pool[b->next2]);
#endif
        s->stats[ST_WALKED] += b->count;
        for (int j = 0; j < b->count; j++) {
            if (!fits(b->top[j], q)) continue;
            if (!matches(&b->key[j], seats)) continue;
            int lo = b->lo[j], hi = b->hi[j];
            if (lo >= k || hi < k) {
                s->stats[ST_HITS]++;
                u64 m = b->key[j].mask;
                if (i != c->head) {
                    /* Swap it into the newest block: what settled one position often
                     * settles more, and the oldest block is the first to go. */
                    Block *h = &s->pool[c->head];
                    int t = c->turn++ % h->count;
                    Key key = b->key[j];
                    uint32_t top = b->top[j];
                    uint8_t hn = b->hint[j];
                    b->top[j] = h->top[t];
                    h->top[t] = top;
                    b->key[j] = h->key[t];
                    b->lo[j] = h->lo[t];
                    b->hi[j] = h->hi[t];
                    b->hint[j] = h->hint[t];
                    h->key[t] = key;
                    h->lo[t] = (int8_t)lo;
                    h->hi[t] = (int8_t)hi;
                    h->hint[t] = hn;
                }
                *rel = to_absolute(m, alive);
                return lo >= k;
            }
            if (!hint && b->hint[j]) hint = to_absolute((u64)1 << (b->hint[j] - 1), alive);
        }
    }
    u64 cut = 0, sub = 0, runs[2];
    int found = play(s, 0, leader, leader, broken, k, left, alive, -1, 0, -1, 0, first, hint,
                     &cut, &sub, runs);
    if (s->aborted) return 0;
    /* A run only one card of which was searched lies all above the lowest card that matters
     * in its suit, or all below it. */
    for (int suit = 0; suit < 4; suit++) {
        u64 r = sub & SUIT(suit);
        if (!r) continue;
        u64 low = r & (~r + 1);
        while (low & runs[0] & ~runs[1]) low = highest(alive & SUIT(suit) & (low - 1));
        sub |= low;
    }
    /* The first trick's special leads name cards: its entries hold for this position only. */
    u64 mask = to_relative(first ? alive : closed(sub, alive), alive);
    if (!cut) cut = hint;
    uint8_t lead = cut ? (uint8_t)(1 + bitindex(to_relative(cut, alive))) : 0;
    store(s, seats, lens, slen, meta, left, mask, found ? k : 0, found ? left : k - 1, lead);
    *rel = sub;
    return found;
}

/* Check a position and load its hands; return the tricks left or a negative code. */
static int load(Solver *s, const u64 *hands, int nhands, int leader, const int *trick,
                int trick_len, int *out_left) {
    if (!s) return DD_BAD_SOLVER;
    if (nhands != s->n || leader < 0 || leader >= s->n) return DD_BAD_SEAT;
    if (trick_len < 0 || trick_len >= s->n) return DD_BAD_TRICK;
    u64 seen = 0;
    for (int p = 0; p < s->n; p++) {
        if (hands[p] & seen) return DD_BAD_CARDS;
        seen |= hands[p];
        if (popcount(hands[p]) > MAXT) return DD_TOO_BIG;
    }
    for (int j = 0; j < trick_len; j++) {
        if (trick[j] < 0 || trick[j] > 63) return DD_BAD_TRICK;
        u64 b = (u64)1 << trick[j];
        if (b & seen) return DD_BAD_TRICK;
        seen |= b;
    }
    int left = popcount(hands[leader]) + (trick_len ? 1 : 0);
    if (left > MAXT) return DD_TOO_BIG;
    for (int j = 0; j < s->n; j++) {
        int p = (leader + j) % s->n;
        int want = j < trick_len ? left - 1 : left;
        if (popcount(hands[p]) != want) return DD_BAD_CARDS;
    }
    for (int p = 0; p < s->n; p++) s->hands[p] = hands[p];
    *out_left = left;
    s->aborted = 0;
    return 0;
}

static int at_least(Solver *s, int leader, const int *trick, int trick_len, int broken,
                    int first, int k, int left) {
    u64 rel;
    if (!trick_len) return start(s, leader, broken, k, left, first, &rel);
    if (k <= 0) return 1;
    if (k > left) return 0;
    u64 alive = 0;
    for (int p = 0; p < s->n; p++) alive |= s->hands[p];
    int led = trick[0] / SUITW;
    u64 best = 0, cards = 0;
    int winner = -1;
    for (int j = 0; j < trick_len; j++) {
        u64 b = (u64)1 << trick[j];
        alive |= b;
        cards |= b;
        if ((b & (SUIT(led) | SUIT(SPADES))) && b > best) {
            best = b;
            winner = (leader + j) % s->n;
        }
    }
    u64 runs[2];
    return play(s, trick_len, (leader + trick_len) % s->n, leader, broken, k, left, alive, led,
                best, winner, cards, first, 0, NULL, &rel, runs);
}

/* Whether the counted seats take k or more of the tricks left (1 / 0), or a negative code. */
int dd_at_least(void *p, const u64 *hands, int nhands, int leader, const int *trick,
                int trick_len, int broken, int done, int k) {
    Solver *s = p;
    int left;
    int err = load(s, hands, nhands, leader, trick, trick_len, &left);
    if (err) return err;
    u64 limit = s->limit;
    if (limit) s->limit = s->nodes + limit;
    int found = at_least(s, leader, trick, trick_len, broken != 0, done == 0, k, left);
    s->limit = limit;
    return s->aborted ? DD_OVER_BUDGET : found;
}

/* The counted seats' tricks of those left with best play, or a negative code. */
int dd_value(void *p, const u64 *hands, int nhands, int leader, const int *trick, int trick_len,
             int broken, int done) {
    Solver *s = p;
    int left;
    int err = load(s, hands, nhands, leader, trick, trick_len, &left);
    if (err) return err;
    u64 limit = s->limit;
    if (limit) s->limit = s->nodes + limit;
    int lo = 0, hi = left;
    while (lo < hi && !s->aborted) {
        int k = (lo + hi + 1) / 2;
        if (at_least(s, leader, trick, trick_len, broken != 0, done == 0, k, left))
            lo = k;
        else
            hi = k - 1;
    }
    s->limit = limit;
    return s->aborted ? DD_OVER_BUDGET : lo;
}

/* The sure-trick bounds of a trick's start (``out``: the maximizers' tricks, the others'),
 * for the tests that hold them under the true values; the objective must count its
 * maximizers. 0, or a negative code. */
int dd_sure(void *p, const u64 *hands, int nhands, int leader, int broken, int *out) {
    Solver *s = p;
    int left;
    int err = load(s, hands, nhands, leader, NULL, 0, &left);
    if (err) return err;
    if (!s->aligned || !out) return DD_BAD_SOLVER;
    u64 alive = 0;
    for (int q = 0; q < s->n; q++) alive |= s->hands[q];
    u64 used[2];
    sure(s, leader, broken != 0, 0, alive, MAXT + 1, 3 * MAXT, &out[0], &out[1], used);
    return 0;
}
