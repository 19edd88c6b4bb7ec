/* SPDX-License-Identifier: MIT */
/*
 * A block device's interrupts and the CPUs that take them.  A latency-bound job's result
 * depends on whether its threads run where the device's completions arrive (1.5x for 4 KiB
 * O_DIRECT at QD 1 on the build machine: docs/accuracy.md, CPU placement), so a result says
 * where they arrived.
 */
#ifndef LLMIO_IRQ_H
#define LLMIO_IRQ_H

#include <stddef.h>
#include <stdint.h>

#define IRQ_MAX_CPUS 1024
#define IRQ_MAX      64

/*
 * The MSI/MSI-X interrupts of the disk whose sysfs directory is disk_dir (/sys/block/vda, or
 * the /sys/devices/... path it links to): the msi_irqs of the first device above its
 * "device" link that has them (virtio-blk, NVMe).  How many went into irqs; 0 when the device
 * has none that sysfs shows (loop, dm, legacy INTx).
 */
unsigned irq_of_disk(const char *disk_dir, unsigned *irqs, unsigned max);

/*
 * Interrupt counts of irqs, summed per CPU, from /proc/interrupts into per_cpu (indexed by CPU
 * number, IRQ_MAX_CPUS entries, zeroed first).  0, or -errno when the file cannot be read.
 */
int irq_counts(const unsigned *irqs, unsigned n, uint64_t *per_cpu);

/*
 * Sum of b - a over all CPUs into *total, and the CPUs that took at least 5 % of it as a list
 * ("1", "0-1") into cpus ("" when there were none).
 */
void irq_share(const uint64_t *a, const uint64_t *b, uint64_t *total, char *cpus, size_t len);

#endif
