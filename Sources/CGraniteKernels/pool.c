// GraniteML's worker threads for its parallel loops. A model runs dozens of short parallel
// steps back to back with serial ones between, so while a run holds the pool idle workers keep
// spinning (a worker that sleeps is woken onto the caller's core and shares it until the
// scheduler moves it, which cost more than the spinning saves); otherwise they spin briefly
// and then sleep on a futex. Spinning workers yield now and then, and a caller that waits
// long for a chunk sleeps: when another process holds a core (ONNX Runtime's threads spin for
// ~25 ms after each run), the scheduler can then run the late chunk on the caller's core
// instead of leaving it queued behind the other process. The caller takes part in every job. Chunks are claimed through one atomic word holding
// the job's generation, chunk count and next chunk: a worker that wakes late for an old job
// finds its generation gone and claims nothing, and a job never waits for a worker that has
// not woken up (the caller claims the chunks itself).
#include "common.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__linux__)
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GK_POOL_MAX 64
#define GK_POOL_SPIN_NS 200000   /* how long an idle, unheld worker spins before it sleeps */
#define GK_POOL_YIELD_NS 50000   /* a spinning worker yields its core this often */
#define GK_POOL_WAIT_NS 100000   /* how long a caller spins for the last chunks before it sleeps */

struct gk_pool {
    pthread_mutex_t grow;             /* serialises adding workers */
    int workers;
    pthread_t threads[GK_POOL_MAX];
    _Atomic uint32_t generation;      /* bumped per job; the futex word idle workers sleep on */
    _Atomic int sleepers;
    _Atomic int holds;                /* runs in progress that keep idle workers spinning */
    _Atomic uint64_t claim;           /* generation << 32 | count << 16 | next chunk */
    _Atomic int done;                 /* chunks finished in the current job; futex word of a caller */
    _Atomic int caller_sleeps;        /* the caller sleeps on `done` */
    _Atomic int busy;                 /* a caller owns the pool */
    _Atomic(gk_task) task;
    _Atomic(void *) context;
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void relax(void) {
#if GK_X86
    __builtin_ia32_pause();
#endif
}

/* Claims and runs chunks of job `gen` until none is left (or the job is no longer current). */
static void run_chunks(gk_pool *p, uint32_t gen) {
    gk_task task = atomic_load(&p->task);
    void *context = atomic_load(&p->context);
    uint64_t w = atomic_load(&p->claim);
    for (;;) {
        uint32_t count = (uint32_t)(w >> 16) & 0xFFFF, next = (uint32_t)w & 0xFFFF;
        if ((uint32_t)(w >> 32) != gen || next >= count) return;
        if (atomic_compare_exchange_weak(&p->claim, &w, w + 1)) {
            task(context, (int)next);
            atomic_fetch_add(&p->done, 1);
            if (atomic_load(&p->caller_sleeps)) syscall(SYS_futex, &p->done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
            w = atomic_load(&p->claim);
        }
    }
}

static void *worker(void *arg) {
    gk_pool *p = arg;
    uint32_t seen = atomic_load(&p->generation);
    for (;;) {
        uint64_t start = now_ns(), yielded = start;
        uint32_t gen;
        for (int spins = 0; (gen = atomic_load(&p->generation)) == seen; spins++) {
            if ((spins & 255) != 255) {
                relax();
                continue;
            }
            uint64_t t = now_ns();
            if (atomic_load(&p->holds) == 0 && t - start > GK_POOL_SPIN_NS) {
                atomic_fetch_add(&p->sleepers, 1);
                syscall(SYS_futex, &p->generation, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
                atomic_fetch_sub(&p->sleepers, 1);
                start = yielded = now_ns();
            } else if (t - yielded > GK_POOL_YIELD_NS) {
                sched_yield();
                yielded = t;
            }
        }
        seen = gen;
        run_chunks(p, gen);
    }
    return NULL;
}

gk_pool *gk_pool_shared(int threads) {
    static gk_pool pool = {.grow = PTHREAD_MUTEX_INITIALIZER};
    int want = threads - 1 < GK_POOL_MAX ? threads - 1 : GK_POOL_MAX;
    if (want <= 0) return NULL;
    pthread_mutex_lock(&pool.grow);
    while (pool.workers < want) {
        if (pthread_create(&pool.threads[pool.workers], NULL, worker, &pool) != 0) break;
        pthread_detach(pool.threads[pool.workers]);
        pool.workers++;
    }
    int ready = pool.workers > 0;
    pthread_mutex_unlock(&pool.grow);
    return ready ? &pool : NULL;
}

int gk_pool_run(gk_pool *p, int count, gk_task task, void *context) {
    if (!p || count < 1 || count > 0xFFFF) return 0;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&p->busy, &expected, 1)) return 0;
    uint32_t gen = atomic_load(&p->generation) + 1;
    atomic_store(&p->task, task);
    atomic_store(&p->context, context);
    atomic_store(&p->done, 0);
    atomic_store(&p->claim, (uint64_t)gen << 32 | (uint64_t)count << 16);
    atomic_store(&p->generation, gen);
    if (atomic_load(&p->sleepers) > 0) syscall(SYS_futex, &p->generation, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    run_chunks(p, gen);
    // Chunks still running elsewhere: spin a little, then sleep until a worker finishes one.
    uint64_t start = 0;
    for (int spins = 1, done; (done = atomic_load(&p->done)) < count; spins++) {
        if ((spins & 255) != 0) {
            relax();
            continue;
        }
        uint64_t t = now_ns();
        if (!start) {
            start = t;
        } else if (t - start > GK_POOL_WAIT_NS) {
            atomic_store(&p->caller_sleeps, 1);
            if (atomic_load(&p->done) == done) syscall(SYS_futex, &p->done, FUTEX_WAIT_PRIVATE, done, NULL, NULL, 0);
            atomic_store(&p->caller_sleeps, 0);
        }
    }
    atomic_store(&p->busy, 0);
    return 1;
}

void gk_pool_hold(gk_pool *p, int on) {
    if (!p) return;
    if (!on) {
        atomic_fetch_sub(&p->holds, 1);
        return;
    }
    // Sleepers wake up, find no job and, held, spin instead of sleeping again.
    atomic_fetch_add(&p->holds, 1);
    if (atomic_load(&p->sleepers) > 0) syscall(SYS_futex, &p->generation, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
gk_pool *gk_pool_shared(int threads) {
    (void)threads;
    return NULL;
}

int gk_pool_run(gk_pool *p, int count, gk_task task, void *context) {
    (void)p, (void)count, (void)task, (void)context;
    return 0;
}

void gk_pool_hold(gk_pool *p, int on) { (void)p, (void)on; }
#endif
