// SPDX-License-Identifier: MIT
// libllmio_torch.so: the CPU allocator llmio's offload hooks (python/llmio_offload.py) hand
// PyTorch while they are active.  It serves every CPU tensor from plain malloc, 64-byte aligned
// by hand, where torch's own allocator asks posix_memalign(64, n).
//
// Why: glibc 2.36 (Debian 12) serves posix_memalign(64, n) from a block of n + 64 + 32 bytes
// and puts the spare bytes at its head and tail in its per-thread cache, where they cannot merge
// with the block around them (glibc bug 30723, fixed upstream in 2023).  A freed tensor's block
// is then too small for the next tensor of its size.  With the hooks, forward frees every tensor
// the store has written, so the next ones land on memory not used before in that step and the
// memory saved is paid in page faults (bench/aligned_reuse.c; docs/offload.md, "Memory").
// malloc(n + 72) of the same n fits the freed block exactly.
//
// It is not linked against libc10: the hooks make the libc10 torch itself loaded global first,
// so these symbols bind to that one and never load a second copy.  It calls no c10 function
// that passes a std::string (whose name differs between C++ ABIs): when malloc fails it hands
// the request to the allocator it replaced, which reports the failure in torch's own words.
#include <atomic>
#include <cstdint>
#include <cstdlib>

#include <c10/core/CPUAllocator.h>

#define API extern "C" __attribute__((visibility("default")))

namespace
{

// data - the block malloc returned is at most sizeof(void *) + gAlignment - 1
constexpr size_t extra = sizeof(void *) + c10::gAlignment;

std::atomic<unsigned long long> served{0};
c10::Allocator *replaced; // the allocator install() took the place of

void release(void *data)
{
	if (data == nullptr)
		return;
	c10::profiledCPUMemoryReporter().Delete(data);
	std::free(static_cast<void **>(data)[-1]); // the block's start, kept just before the data
}

struct MallocAllocator final : c10::Allocator {
	c10::DataPtr allocate(size_t n) const override
	{
		// as torch's own: no memory for an empty tensor
		if (n == 0)
			return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
		void *raw = n <= SIZE_MAX - extra ? std::malloc(n + extra) : nullptr;
		if (raw == nullptr)
			return replaced->allocate(n); // it raises torch's out-of-memory error
		uintptr_t at =
		        (reinterpret_cast<uintptr_t>(raw) + sizeof(void *) + c10::gAlignment - 1) &
		        ~uintptr_t(c10::gAlignment - 1);
		void *data = reinterpret_cast<void *>(at);
		static_cast<void **>(data)[-1] = raw;
		// torch's profiler counts CPU memory through it, as through torch's own allocator
		c10::profiledCPUMemoryReporter().New(data, n);
		served.fetch_add(1, std::memory_order_relaxed);
		return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
	}
	c10::DeleterFnPtr raw_deleter() const override
	{
		return &release;
	}
};

MallocAllocator ours;

} // namespace

// Put this allocator in torch's CPU slot: 1 when it is there, 0 when an allocator set with a
// higher priority holds the slot (torch's mobile allocator, another extension's); then nothing
// changed.  Tensors keep the deleter of the allocator that made them, so a later restore() does
// not affect the tensors made in between.  Call with the GIL held (not thread-safe).
API int llmio_torch_alloc_install(void)
{
	c10::Allocator *cur = c10::GetCPUAllocator();
	if (cur == &ours)
		return 1;
	c10::SetCPUAllocator(&ours, 0);
	if (c10::GetCPUAllocator() != &ours)
		return 0;
	replaced = cur;
	return 1;
}

// Put back the allocator install() replaced, if this one still holds the slot.
API void llmio_torch_alloc_restore(void)
{
	if (replaced != nullptr && c10::GetCPUAllocator() == &ours)
		c10::SetCPUAllocator(replaced, 0);
}

// How many tensors this allocator has served (the hooks' check that torch calls it).
API unsigned long long llmio_torch_alloc_served(void)
{
	return served.load(std::memory_order_relaxed);
}
