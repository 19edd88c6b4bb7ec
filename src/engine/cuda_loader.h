/* SPDX-License-Identifier: MIT */
/*
 * The CUDA runtime (libcudart) and cuFile (libcufile) loaded at run time with dlopen, so that
 * llmio builds and runs on machines without CUDA.  No CUDA header is needed at build time: the
 * few types and prototypes the GPU engines use are declared here, from NVIDIA's public API
 * documentation:
 *   CUDA Runtime API reference (docs.nvidia.com/cuda/cuda-runtime-api), sections "Device
 *   Management", "Memory Management", "Stream Management", "Event Management", "Version
 *   Management";
 *   cuFile API reference (docs.nvidia.com/gpudirect-storage/api-reference-guide), cufile.h:
 *   CUfileError_t, CUfileDescr_t, CUfileDrvProps_t, CUfileIOParams_t, CUfileIOEvents_t.
 * The struct layouts below match cufile.h of CUDA 11.4 to 13.0 (they have only grown at the
 * end there, and we never use a field past what 11.4 had).
 *
 * Search order for each library (the first that loads wins):
 *   1. the override variable (LLMIO_CUDART, LLMIO_CUFILE): a full path; if set it is the only
 *      place looked at, so a wrong path is reported instead of silently bypassed;
 *   2. the dynamic linker's path (LD_LIBRARY_PATH, ld.so.cache), by soname;
 *   3. the CUDA toolkit: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/local/cuda-* (newest
 *      first), each in lib64/ and targets/x86_64-linux/lib/;
 *   4. Python wheels (nvidia-cuda-runtime-cuXX, nvidia-cufile-cuXX): nvidia/cuda_runtime/lib,
 *      nvidia/cufile/lib and nvidia/cu13/lib under $VIRTUAL_ENV, $CONDA_PREFIX,
 *      ~/.local/lib/python3*\/site-packages, /usr/local/lib/python3*\/{site,dist}-packages and
 *      /usr/lib/python3*\/dist-packages.
 *
 * Loading happens once per process (pthread_once) and is thread-safe; the results, including
 * the exact reason of a failure, are kept for every later caller.
 */
#ifndef LLMIO_CUDA_LOADER_H
#define LLMIO_CUDA_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "engine/engine.h"

/* ---- CUDA runtime ---------------------------------------------------------------------- */

typedef int cudaError_t; /* enum cudaError; 0 = cudaSuccess */
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

#define cudaSuccess                 0
#define cudaErrorInsufficientDriver 35
#define cudaErrorNoDevice           100
#define cudaErrorNotReady           600

enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

#define cudaHostAllocDefault           0u
#define cudaHostRegisterDefault        0u
#define cudaStreamNonBlocking          1u
#define cudaEventBlockingSync          1u
#define cudaDeviceScheduleAuto         0u
#define cudaDeviceScheduleSpin         1u
#define cudaDeviceScheduleYield        2u
#define cudaDeviceScheduleBlockingSync 4u

/* The oldest runtime the engines are written against (cuFile shipped with CUDA 11.4). */
#define CUDA_MIN_RUNTIME 11040

struct cudart {
	cudaError_t (*GetDeviceCount)(int *count);
	cudaError_t (*SetDevice)(int device);
	const char *(*GetErrorString)(cudaError_t err);
	cudaError_t (*RuntimeGetVersion)(int *version);
	cudaError_t (*DriverGetVersion)(int *version);
	cudaError_t (*Malloc)(void **ptr, size_t size);
	cudaError_t (*Free)(void *ptr);
	cudaError_t (*HostAlloc)(void **ptr, size_t size, unsigned flags);
	cudaError_t (*FreeHost)(void *ptr);
	cudaError_t (*HostRegister)(void *ptr, size_t size, unsigned flags);
	cudaError_t (*HostUnregister)(void *ptr);
	cudaError_t (*SetDeviceFlags)(unsigned flags);
	cudaError_t (*Memcpy)(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind);
	cudaError_t (*MemcpyAsync)(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
	                           cudaStream_t stream);
	cudaError_t (*StreamCreateWithFlags)(cudaStream_t *stream, unsigned flags);
	cudaError_t (*StreamDestroy)(cudaStream_t stream);
	cudaError_t (*StreamSynchronize)(cudaStream_t stream);
	cudaError_t (*EventCreate)(cudaEvent_t *event);
	cudaError_t (*EventCreateWithFlags)(cudaEvent_t *event, unsigned flags);
	cudaError_t (*EventRecord)(cudaEvent_t event, cudaStream_t stream);
	cudaError_t (*EventQuery)(cudaEvent_t event);
	cudaError_t (*EventSynchronize)(cudaEvent_t event);
	cudaError_t (*EventElapsedTime)(float *ms, cudaEvent_t start, cudaEvent_t end);
	cudaError_t (*EventDestroy)(cudaEvent_t event);
	cudaError_t (*DeviceGetPCIBusId)(char *bus_id, int len, int device);

	char path[PATH_MAX]; /* the library that was loaded */
	int runtime_version; /* 12040 = 12.4 */
	int driver_version;  /* the CUDA version the installed driver supports; 0 = none */
	int ndevices;
};

/* ---- cuFile ------------------------------------------------------------------------------ */

typedef struct {
	int err;    /* CUfileOpError: 0 success, 5001.. cuFile errors */
	int cu_err; /* CUresult of the CUDA driver when err is CU_FILE_CUDA_DRIVER_ERROR */
} CUfileError_t;

#define CU_FILE_SUCCESS               0
#define CU_FILE_HANDLE_TYPE_OPAQUE_FD 1
#define CUFILE_READ                   0
#define CUFILE_WRITE                  1
#define CUFILE_BATCH                  1
#define CUFILE_COMPLETE               0x10
#define CUFILE_CANCELED               0x08
#define CUFILE_FAILED                 0x40
#define CUFILE_INVALID                0x04
#define CUFILE_TIMEOUT                0x20

/* CUFileBoolConfigParameter_t (cuFileGetParameterBool, CUDA 12.2+) */
#define CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE 1
#define CUFILE_PARAM_FORCE_COMPAT_MODE            2
#define CUFILE_PARAM_EXECUTION_PARALLEL_IO        4
#define CUFILE_PARAM_USE_PCIP2PDMA                7

/* CUfileDriverStatusFlags_t: bit numbers in CUfileDrvProps_t.nvfs.dstatusflags */
#define CU_FILE_NVME_SUPPORTED     4
#define CU_FILE_NVMEOF_SUPPORTED   5
#define CU_FILE_NVME_P2P_SUPPORTED 10
/* CUfileFeatureFlags_t: bit numbers in CUfileDrvProps_t.fflags */
#define CU_FILE_BATCH_IO_SUPPORTED 1
#define CU_FILE_STREAMS_SUPPORTED  2

typedef void *CUfileHandle_t;
typedef void *CUfileBatchHandle_t;

typedef struct {
	int type; /* CU_FILE_HANDLE_TYPE_OPAQUE_FD */
	union {
		int fd;
		void *handle;
	} handle;
	const void *fs_ops; /* NULL for kernel filesystems */
} CUfileDescr_t;

typedef struct {
	struct {
		unsigned int major_version;
		unsigned int minor_version;
		size_t poll_thresh_size;
		size_t max_direct_io_size;
		unsigned int dstatusflags;
		unsigned int dcontrolflags;
	} nvfs;
	unsigned int fflags;
	unsigned int max_device_cache_size;
	unsigned int per_buffer_cache_size;
	unsigned int max_device_pinned_mem_size;
	unsigned int max_batch_io_size;
	unsigned int max_batch_io_timeout_msecs;
} CUfileDrvProps_t;

typedef struct {
	int mode; /* CUFILE_BATCH */
	union {
		struct {
			void *devPtr_base;
			off_t file_offset;
			off_t devPtr_offset;
			size_t size;
		} batch;
	} u;
	CUfileHandle_t fh;
	int opcode; /* CUFILE_READ / CUFILE_WRITE */
	void *cookie;
} CUfileIOParams_t;

typedef struct {
	void *cookie;
	int status; /* CUFILE_COMPLETE, CUFILE_FAILED, ... */
	size_t ret; /* bytes, or a negative error stored in a size_t */
} CUfileIOEvents_t;

struct cufile {
	CUfileError_t (*DriverOpen)(void);
	CUfileError_t (*DriverClose)(void); /* optional; closed at exit when present */
	CUfileError_t (*HandleRegister)(CUfileHandle_t *fh, CUfileDescr_t *descr);
	void (*HandleDeregister)(CUfileHandle_t fh);
	CUfileError_t (*BufRegister)(const void *base, size_t len, int flags);
	CUfileError_t (*BufDeregister)(const void *base);
	ssize_t (*Read)(CUfileHandle_t fh, void *base, size_t size, off_t file_off, off_t buf_off);
	ssize_t (*Write)(CUfileHandle_t fh, const void *base, size_t size, off_t file_off,
	                 off_t buf_off);
	/* optional: NULL when the library predates them */
	CUfileError_t (*DriverGetProperties)(CUfileDrvProps_t *props);
	CUfileError_t (*GetVersion)(int *version);
	CUfileError_t (*GetParameterBool)(int param, bool *value);
	CUfileError_t (*BatchIOSetUp)(CUfileBatchHandle_t *batch, unsigned nr);
	CUfileError_t (*BatchIOSubmit)(CUfileBatchHandle_t batch, unsigned nr,
	                               CUfileIOParams_t *params, unsigned flags);
	CUfileError_t (*BatchIOGetStatus)(CUfileBatchHandle_t batch, unsigned min_nr, unsigned *nr,
	                                  CUfileIOEvents_t *events, struct timespec *timeout);
	void (*BatchIODestroy)(CUfileBatchHandle_t batch);
	CUfileError_t (*ReadAsync)(CUfileHandle_t fh, void *base, size_t *size, off_t *file_off,
	                           off_t *buf_off, ssize_t *bytes, cudaStream_t stream);
	CUfileError_t (*WriteAsync)(CUfileHandle_t fh, void *base, size_t *size, off_t *file_off,
	                            off_t *buf_off, ssize_t *bytes, cudaStream_t stream);

	bool has_batch; /* all four batch symbols resolved */
	bool has_async; /* cuFileReadAsync and cuFileWriteAsync resolved */
	char path[PATH_MAX];
	int version; /* cuFileGetVersion, 0 when the library has no such call */
	/*
	 * cuFileDriverOpen() is called once per process and the driver is left open; props are
	 * valid when have_props.  mode says whether cuFile runs in compatibility (POSIX) mode or
	 * true GDS mode, and why.
	 */
	bool have_props;
	CUfileDrvProps_t props;
	bool compat;
	char mode[320];
	/*
	 * The stream API needs cuFile's thread pool, configured in a cufile.json
	 * (execution.parallel_io); without one it can hang (kvikio).  async_ok says whether the
	 * prerequisites were seen; async_why says what is missing.
	 */
	bool async_ok;
	char async_why[PATH_MAX + 160];
};

/*
 * The CUDA runtime with at least one GPU, loaded once.  NULL when it cannot be had, with the
 * exact reason (where we looked, the missing symbol, the version, the device error) and what to
 * install in e (-ENODEV).
 */
const struct cudart *cuda_runtime(struct llmio_error *e);

/* cuFile with its driver open (and the CUDA runtime).  NULL with the reason in e (-ENODEV). */
const struct cufile *cuda_cufile(struct llmio_error *e);

/* "cudaErrorNoDevice (100: no CUDA-capable device is detected)"-like text for an error. */
const char *cuda_strerror(const struct cudart *rt, cudaError_t err, char *buf, size_t len);

/* "CU_FILE_DRIVER_NOT_INITIALIZED (5001)"-like text for a cuFile error. */
const char *cufile_strerror(CUfileError_t e, char *buf, size_t len);

/*
 * Append printf-style text to a message or notes buffer (truncating quietly: a cut note is
 * still useful).  Paths here can be long, which is why messages go through this.
 */

/* The same, replacing what buf held. */
/* The gpu= option of both GPU engines; their option structs start with `int gpu`. */
#define CUDA_GPU_OPTION(opts_type)                                                                 \
	{                                                                                          \
		.name = "gpu", .type = OPTD_INT, OPTD_FIELD(opts_type, gpu),                       \
		.scope = OPTD_SCOPE_ENGINE, .def = "0",                                            \
		.help = "GPU (CUDA device id) whose memory holds the buffers", .min = 0,           \
		.max = 1023,                                                                       \
	}

#define msgf(buf, len, ...) ((buf)[0] = '\0', engine_appendf((buf), (len), __VA_ARGS__))

/* Select `gpu` for the calling thread; 0, or -ENODEV / -EIO with the reason in e. */
int cuda_use_gpu(const struct cudart *rt, int gpu, struct llmio_error *e);

/*
 * How a thread waiting for the GPU waits (option sched of both GPU engines): CUDA's default
 * spins in cudaEventSynchronize, which inflates the cores-busy figure GB/s per core is computed
 * from.  CUDA_SCHED_BLOCKING also makes the engines' events blocking-sync.
 */
enum cuda_sched { CUDA_SCHED_BLOCKING, CUDA_SCHED_YIELD, CUDA_SCHED_SPIN };
extern const char *const cuda_sched_names[];

#define CUDA_SCHED_OPTION(opts_type)                                                               \
	{                                                                                          \
		.name = "sched", .type = OPTD_ENUM, OPTD_FIELD(opts_type, sched),                  \
		.scope = OPTD_SCOPE_ENGINE, .def = "blocking", .choices = "blocking|yield|spin",   \
		.help = "how a thread waits for the GPU: blocking (sleeps), yield or spin "        \
		        "(CUDA's "                                                                 \
		        "default, burns a core)",                                                  \
	}

/*
 * cudaSetDeviceFlags for `sched` on the current GPU; appends what was used (or why CUDA kept
 * its own setting) to notes.  The event flags to use follow.
 */
unsigned cuda_set_sched(const struct cudart *rt, int sched, char *notes, size_t nlen);

/*
 * Engine buffers in GPU memory (engine_ops.buf_alloc / buf_free) for the GPU engines, whose
 * option structs start with `int gpu`: cudaMalloc on that GPU (never managed memory), filled
 * from `init` with cudaMemcpy.  Each buffer starts on a 64 KiB GPU page and owns its pages:
 * cudaMalloc sub-allocates small sizes (256-byte alignment only), and cuFileBufRegister of two
 * buffers sharing a GPU page fails or pins the neighbour.
 */
#define GPU_PAGE ((size_t)64 << 10)
int gpu_buf_alloc(const void *opts, void **buf, size_t len, const void *init,
                  struct llmio_error *e);
void gpu_buf_free(const void *opts, void *buf);
/* engine_ops.buf_copy_in / buf_copy_out for gpu_buf_alloc's buffers: cudaMemcpy, 0 or -EIO */
int gpu_buf_copy_in(const void *opts, void *buf, size_t at, const void *src, size_t n);
int gpu_buf_copy_out(const void *opts, const void *buf, size_t at, void *dst, size_t n);

#endif
