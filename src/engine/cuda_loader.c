/* SPDX-License-Identifier: MIT */
/*
 * Run-time loading of libcudart and libcufile (see cuda_loader.h for the search order).
 *
 * Every symbol is resolved by name from a table, so a library that lacks one is reported with
 * the symbol and the library's path.  Required symbols make the library unusable when absent;
 * optional ones (cuFile's batch and stream APIs, properties, version) leave their pointer NULL
 * and the engines choose what they can do.
 */
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cuda_loader.h"
#include "base/error.h"

struct sym {
	const char *name;
	const char *alt; /* an older name of the same call, or NULL */
	size_t offset;
	bool required;
};

#define RT(field, name)                                                                            \
	{                                                                                          \
		name, NULL, offsetof(struct cudart, field), true                                   \
	}

static const struct sym cudart_syms[] = {
        RT(GetDeviceCount, "cudaGetDeviceCount"),
        RT(SetDevice, "cudaSetDevice"),
        RT(GetErrorString, "cudaGetErrorString"),
        RT(RuntimeGetVersion, "cudaRuntimeGetVersion"),
        RT(DriverGetVersion, "cudaDriverGetVersion"),
        RT(Malloc, "cudaMalloc"),
        RT(Free, "cudaFree"),
        RT(HostAlloc, "cudaHostAlloc"),
        RT(FreeHost, "cudaFreeHost"),
        RT(HostRegister, "cudaHostRegister"),
        RT(HostUnregister, "cudaHostUnregister"),
        RT(SetDeviceFlags, "cudaSetDeviceFlags"),
        RT(Memcpy, "cudaMemcpy"),
        RT(MemcpyAsync, "cudaMemcpyAsync"),
        RT(StreamCreateWithFlags, "cudaStreamCreateWithFlags"),
        RT(StreamDestroy, "cudaStreamDestroy"),
        RT(StreamSynchronize, "cudaStreamSynchronize"),
        RT(EventCreate, "cudaEventCreate"),
        RT(EventCreateWithFlags, "cudaEventCreateWithFlags"),
        RT(EventRecord, "cudaEventRecord"),
        RT(EventQuery, "cudaEventQuery"),
        RT(EventSynchronize, "cudaEventSynchronize"),
        RT(EventElapsedTime, "cudaEventElapsedTime"),
        RT(EventDestroy, "cudaEventDestroy"),
        RT(DeviceGetPCIBusId, "cudaDeviceGetPCIBusId"),
};

#define CF(field, name, req)                                                                       \
	{                                                                                          \
		name, NULL, offsetof(struct cufile, field), req                                    \
	}

static const struct sym cufile_syms[] = {
        CF(DriverOpen, "cuFileDriverOpen", true),
        {"cuFileDriverClose_v2", "cuFileDriverClose", offsetof(struct cufile, DriverClose), false},
        CF(HandleRegister, "cuFileHandleRegister", true),
        CF(HandleDeregister, "cuFileHandleDeregister", true),
        CF(BufRegister, "cuFileBufRegister", true),
        CF(BufDeregister, "cuFileBufDeregister", true),
        CF(Read, "cuFileRead", true),
        CF(Write, "cuFileWrite", true),
        CF(DriverGetProperties, "cuFileDriverGetProperties", false),
        CF(GetVersion, "cuFileGetVersion", false),
        CF(GetParameterBool, "cuFileGetParameterBool", false),
        CF(BatchIOSetUp, "cuFileBatchIOSetUp", false),
        CF(BatchIOSubmit, "cuFileBatchIOSubmit", false),
        CF(BatchIOGetStatus, "cuFileBatchIOGetStatus", false),
        CF(BatchIODestroy, "cuFileBatchIODestroy", false),
        CF(ReadAsync, "cuFileReadAsync", false),
        CF(WriteAsync, "cuFileWriteAsync", false),
};

/* One library to find: its override variable, sonames, and wheel folder. */
struct libspec {
	const char *what;     /* "the CUDA runtime (libcudart)" */
	const char *env;      /* LLMIO_CUDART */
	const char *names[5]; /* sonames, most wanted first */
	const char *wheel;    /* nvidia/<wheel>/lib */
	const char *install;  /* what to install */
};

static const struct libspec cudart_spec = {
        .what = "libcudart (the CUDA runtime)",
        .env = "LLMIO_CUDART",
        .names = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", NULL},
        .wheel = "cuda_runtime",
        .install = "install the CUDA toolkit or runtime (apt install cuda-cudart-12-x, or pip "
                   "install nvidia-cuda-runtime-cu12), or set LLMIO_CUDART=/path/to/"
                   "libcudart.so",
};

static const struct libspec cufile_spec = {
        .what = "libcufile (cuFile)",
        .env = "LLMIO_CUFILE",
        .names = {"libcufile.so.0", "libcufile.so", NULL},
        .wheel = "cufile",
        .install = "install GPUDirect Storage (apt install libcufile-12-x, or pip install "
                   "nvidia-cufile-cu12), or set LLMIO_CUFILE=/path/to/libcufile.so.0",
};

/* dlopen and remember the file that was really opened (a soname resolves to a path). */
static void *try_open(const char *file, char *path, size_t plen, char *dlerr, size_t dlen)
{
	struct link_map *lm = NULL;
	void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		/* A file that exists but does not load (missing dependency) is worth saying. */
		if (strchr(file, '/') && access(file, F_OK) == 0 && !dlerr[0])
			msgf(dlerr, dlen, "%s", dlerror());
		return NULL;
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
		msgf(path, plen, "%s", lm->l_name);
	else
		msgf(path, plen, "%s", file);
	return h;
}

/* Try every soname in dir (a glob pattern); the first that loads wins. */
static void *try_dir(const struct libspec *spec, const char *pattern, char *path, size_t plen,
                     char *dlerr, size_t dlen)
{
	glob_t g;
	void *h = NULL;

	if (glob(pattern, GLOB_ONLYDIR, NULL, &g))
		return NULL;
	/* glob sorts ascending; newest toolkit / Python first */
	for (size_t i = g.gl_pathc; i-- > 0 && !h;) {
		for (size_t n = 0; spec->names[n] && !h; n++) {
			char file[PATH_MAX + 64];

			snprintf(file, sizeof(file), "%s/%s", g.gl_pathv[i], spec->names[n]);
			h = try_open(file, path, plen, dlerr, dlen);
		}
	}
	globfree(&g);
	return h;
}

/*
 * The wheel folder `sub` under the Python of every python3 on PATH: its sys.prefix is the
 * folder above bin/ (a venv, conda, or a system Python), so no interpreter has to run.
 */
static void *try_path_pythons(const struct libspec *spec, const char *sub, char *path, size_t plen,
                              char *dlerr, size_t dlen)
{
	const char *envpath = getenv("PATH");
	char dirs[4096], pat[PATH_MAX], *save = NULL;
	void *h = NULL;

	if (!envpath || !envpath[0])
		return NULL;
	snprintf(dirs, sizeof(dirs), "%s", envpath);
	for (char *d = strtok_r(dirs, ":", &save); d && !h; d = strtok_r(NULL, ":", &save)) {
		char *slash;

		snprintf(pat, sizeof(pat), "%s/python3", d);
		if (d[0] != '/' || access(pat, X_OK))
			continue;
		slash = strrchr(d, '/');
		if (!slash || strcmp(slash, "/bin"))
			continue;
		*slash = '\0'; /* the prefix */
		snprintf(pat, sizeof(pat), "%s/lib/python3*/site-packages/%s", d, sub);
		h = try_dir(spec, pat, path, plen, dlerr, dlen);
		if (!h) {
			snprintf(pat, sizeof(pat), "%s/lib/python3*/dist-packages/%s", d, sub);
			h = try_dir(spec, pat, path, plen, dlerr, dlen);
		}
		*slash = '/';
	}
	return h;
}

/*
 * Find and open one library.  NULL with why = where we looked and what to install (or the
 * dlopen error of a file that exists but does not load).
 */
static void *find_lib(const struct libspec *spec, char *path, size_t plen, char *why, size_t wlen)
{
	static const char *const toolkit_envs[] = {"CUDA_HOME", "CUDA_PATH"};
	static const char *const py_roots[] = {
	        "VIRTUAL_ENV",
	        "CONDA_PREFIX",
	        NULL /* ~/.local */,
	};
	static const char *const sys_py[] = {
	        "/usr/local/lib/python3*/site-packages",
	        "/usr/local/lib/python3*/dist-packages",
	        "/usr/lib/python3*/dist-packages",
	        "/usr/lib/python3/dist-packages",
	};
	static const char *const wheel_dirs[] = {"nvidia/%s/lib", "nvidia/cu13/lib"};
	char dlerr[512] = "", pat[PATH_MAX]; /* the first dlopen() error seen */
	const char *over = getenv(spec->env);
	void *h;

	if (over && over[0]) {
		h = try_open(over, path, plen, dlerr, sizeof(dlerr));
		if (!h)
			msgf(why, wlen, "%s=%s does not load: %s; fix the path or unset it",
			     spec->env, over, dlerr[0] ? dlerr : "no such file");
		return h;
	}
	for (size_t n = 0; spec->names[n]; n++)
		if ((h = try_open(spec->names[n], path, plen, dlerr, sizeof(dlerr))))
			return h;

	for (size_t i = 0; i < sizeof(toolkit_envs) / sizeof(toolkit_envs[0]); i++) {
		const char *root = getenv(toolkit_envs[i]);

		if (!root || !root[0])
			continue;
		snprintf(pat, sizeof(pat), "%s/lib64", root);
		if ((h = try_dir(spec, pat, path, plen, dlerr, sizeof(dlerr))))
			return h;
		snprintf(pat, sizeof(pat), "%s/targets/x86_64-linux/lib", root);
		if ((h = try_dir(spec, pat, path, plen, dlerr, sizeof(dlerr))))
			return h;
	}
	if ((h = try_dir(spec, "/usr/local/cuda/lib64", path, plen, dlerr, sizeof(dlerr))) ||
	    (h = try_dir(spec, "/usr/local/cuda/targets/x86_64-linux/lib", path, plen, dlerr,
	                 sizeof(dlerr))) ||
	    (h = try_dir(spec, "/usr/local/cuda-*/lib64", path, plen, dlerr, sizeof(dlerr))))
		return h;

	for (size_t w = 0; w < sizeof(wheel_dirs) / sizeof(wheel_dirs[0]); w++) {
		char sub[64];

		snprintf(sub, sizeof(sub), wheel_dirs[w], spec->wheel);
		for (size_t i = 0; i < sizeof(py_roots) / sizeof(py_roots[0]); i++) {
			const char *root = py_roots[i] ? getenv(py_roots[i]) : getenv("HOME");

			if (!root || !root[0])
				continue;
			snprintf(pat, sizeof(pat), "%s/%slib/python3*/site-packages/%s", root,
			         py_roots[i] ? "" : ".local/", sub);
			if ((h = try_dir(spec, pat, path, plen, dlerr, sizeof(dlerr))))
				return h;
		}
		if ((h = try_path_pythons(spec, sub, path, plen, dlerr, sizeof(dlerr))))
			return h;
		for (size_t i = 0; i < sizeof(sys_py) / sizeof(sys_py[0]); i++) {
			snprintf(pat, sizeof(pat), "%s/%s", sys_py[i], sub);
			if ((h = try_dir(spec, pat, path, plen, dlerr, sizeof(dlerr))))
				return h;
		}
	}

	if (dlerr[0]) {
		msgf(why, wlen, "%s was found but does not load: %s", spec->what, dlerr);
		return NULL;
	}
	msgf(why, wlen,
	     "%s not found: looked at %s (unset), the dynamic linker path (%s), $CUDA_HOME, "
	     "$CUDA_PATH, /usr/local/cuda{,-*}/{lib64,targets/x86_64-linux/lib} and Python "
	     "wheels (nvidia/%s/lib and nvidia/cu13/lib in $VIRTUAL_ENV, $CONDA_PREFIX, "
	     "~/.local, the prefix of every python3 on PATH, /usr/local/lib and /usr/lib "
	     "python3* site-/dist-packages); %s",
	     spec->what, spec->env, spec->names[0], spec->wheel, spec->install);
	return NULL;
}

/* Resolve a symbol table into api; the first missing required symbol fails it. */
static int resolve(void *h, const struct sym *syms, size_t n, void *api, const char *path,
                   const char *install, char *why, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f && syms[i].alt)
			f = dlsym(h, syms[i].alt);
		if (!f && syms[i].required) {
			msgf(why, len, "%s has no symbol %s (too old or not the real library); %s",
			     path, syms[i].name, install);
			return -ENOSYS;
		}
		memcpy((char *)api + syms[i].offset, &f, sizeof(f));
	}
	return 0;
}

const char *cuda_strerror(const struct cudart *rt, cudaError_t err, char *buf, size_t len)
{
	const char *s = rt && rt->GetErrorString ? rt->GetErrorString(err) : NULL;

	msgf(buf, len, "CUDA error %d: %s", err, s ? s : "unknown");
	return buf;
}

/* The cuFile errors a user meets when setting up; the rest are shown by number. */
static const char *const cufile_errs[] = {
        [1] = "CU_FILE_DRIVER_NOT_INITIALIZED",    [2] = "CU_FILE_DRIVER_INVALID_PROPS",
        [3] = "CU_FILE_DRIVER_UNSUPPORTED_LIMIT",  [4] = "CU_FILE_DRIVER_VERSION_MISMATCH",
        [5] = "CU_FILE_DRIVER_VERSION_READ_ERROR", [6] = "CU_FILE_DRIVER_CLOSING",
        [7] = "CU_FILE_PLATFORM_NOT_SUPPORTED",    [8] = "CU_FILE_IO_NOT_SUPPORTED",
        [9] = "CU_FILE_DEVICE_NOT_SUPPORTED",      [10] = "CU_FILE_NVFS_DRIVER_ERROR",
        [11] = "CU_FILE_CUDA_DRIVER_ERROR",        [12] = "CU_FILE_CUDA_POINTER_INVALID",
        [13] = "CU_FILE_CUDA_MEMORY_TYPE_INVALID", [14] = "CU_FILE_CUDA_POINTER_RANGE_ERROR",
        [15] = "CU_FILE_CUDA_CONTEXT_MISMATCH",    [16] = "CU_FILE_INVALID_MAPPING_SIZE",
        [17] = "CU_FILE_INVALID_MAPPING_RANGE",    [18] = "CU_FILE_INVALID_FILE_TYPE",
        [19] = "CU_FILE_INVALID_FILE_OPEN_FLAG",   [20] = "CU_FILE_DIO_NOT_SET",
};

const char *cufile_strerror(CUfileError_t e, char *buf, size_t len)
{
	int i = e.err - 5000;
	const char *name = i > 0 && i < (int)(sizeof(cufile_errs) / sizeof(cufile_errs[0]))
	                           ? cufile_errs[i]
	                           : NULL;

	if (e.err == CU_FILE_SUCCESS)
		msgf(buf, len, "success");
	else if (e.cu_err)
		msgf(buf, len, "%s (cuFile error %d, CUDA driver error %d)",
		     name ? name : "cuFile error", e.err, e.cu_err);
	else
		msgf(buf, len, "%s (cuFile error %d)", name ? name : "cuFile error", e.err);
	return buf;
}

/* ---- the CUDA runtime ------------------------------------------------------------------ */

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static struct cudart rt;
static const struct cudart *rt_ok;
static char rt_why[1024];

static void rt_load(void)
{
	char cerr[256];
	void *h;
	int ret;

	h = find_lib(&cudart_spec, rt.path, sizeof(rt.path), rt_why, sizeof(rt_why));
	if (!h)
		return;
	if (resolve(h, cudart_syms, sizeof(cudart_syms) / sizeof(cudart_syms[0]), &rt, rt.path,
	            cudart_spec.install, rt_why, sizeof(rt_why)))
		return;
	rt.RuntimeGetVersion(&rt.runtime_version);
	rt.DriverGetVersion(&rt.driver_version);
	if (rt.runtime_version < CUDA_MIN_RUNTIME) {
		msgf(rt_why, sizeof(rt_why),
		     "%s is CUDA runtime %d.%d, older than %d.%d which llmio needs; %s", rt.path,
		     rt.runtime_version / 1000, rt.runtime_version % 1000 / 10,
		     CUDA_MIN_RUNTIME / 1000, CUDA_MIN_RUNTIME % 1000 / 10, cudart_spec.install);
		return;
	}
	if (!rt.driver_version) {
		msgf(rt_why, sizeof(rt_why),
		     "no NVIDIA driver is installed (cudaDriverGetVersion says 0, runtime %s); "
		     "install the NVIDIA driver and check nvidia-smi",
		     rt.path);
		return;
	}
	ret = rt.GetDeviceCount(&rt.ndevices);
	if (ret == cudaErrorInsufficientDriver) {
		msgf(rt_why, sizeof(rt_why),
		     "the NVIDIA driver supports CUDA %d.%d, older than the runtime %s (CUDA "
		     "%d.%d): update the driver, or point LLMIO_CUDART at an older runtime",
		     rt.driver_version / 1000, rt.driver_version % 1000 / 10, rt.path,
		     rt.runtime_version / 1000, rt.runtime_version % 1000 / 10);
		return;
	}
	if (ret != cudaSuccess || rt.ndevices <= 0) {
		msgf(rt_why, sizeof(rt_why),
		     "no GPU: cudaGetDeviceCount (%s) says %s; check nvidia-smi and "
		     "CUDA_VISIBLE_DEVICES",
		     rt.path, ret ? cuda_strerror(&rt, ret, cerr, sizeof(cerr)) : "0 devices");
		return;
	}
	rt_ok = &rt;
}

const struct cudart *cuda_runtime(struct llmio_error *e)
{
	pthread_once(&rt_once, rt_load);
	if (!rt_ok)
		llmio_err(e, -ENODEV, "%s", rt_why);
	return rt_ok;
}

int cuda_use_gpu(const struct cudart *r, int gpu, struct llmio_error *e)
{
	char cerr[256];
	int ret;

	if (gpu >= r->ndevices)
		return llmio_err(e, -ENODEV, "gpu=%d: this machine has %d GPU%s (0..%d)", gpu,
		                 r->ndevices, r->ndevices == 1 ? "" : "s", r->ndevices - 1);
	ret = r->SetDevice(gpu);
	if (ret)
		return llmio_err(e, -EIO, "cudaSetDevice(%d): %s", gpu,
		                 cuda_strerror(r, ret, cerr, sizeof(cerr)));
	return 0;
}

/* GPU buffers handed out: the aligned pointer and what cudaMalloc returned (freed by that). */
struct gpu_block {
	void *aligned, *base;
	struct gpu_block *next;
};

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpu_block *blocks;

int gpu_buf_alloc(const void *opts, void **buf, size_t len, const void *init, struct llmio_error *e)
{
	const struct cudart *r = cuda_runtime(e);
	const int gpu = opts ? *(const int *)opts : 0;
	struct gpu_block *b;
	char cerr[256];
	void *base = NULL;
	int ret;

	*buf = NULL;
	if (!r)
		return -ENODEV;
	ret = cuda_use_gpu(r, gpu, e);
	if (ret)
		return ret;
	b = malloc(sizeof(*b));
	if (!b)
		return llmio_err(e, -ENOMEM, "out of host memory for a GPU buffer's bookkeeping");
	/* whole 64 KiB GPU pages of its own: see GPU_PAGE */
	ret = r->Malloc(&base, (len + GPU_PAGE - 1) / GPU_PAGE * GPU_PAGE + GPU_PAGE);
	if (ret) {
		free(b);
		return llmio_err(e, -ENOMEM, "cudaMalloc(%zu) on GPU %d: %s; lower bs or iodepth",
		                 len, gpu, cuda_strerror(r, ret, cerr, sizeof(cerr)));
	}
	b->base = base;
	b->aligned = (void *)(((uintptr_t)base + GPU_PAGE - 1) & ~(uintptr_t)(GPU_PAGE - 1));
	ret = r->Memcpy(b->aligned, init, len, cudaMemcpyHostToDevice);
	if (ret) {
		llmio_err(e, -EIO, "cudaMemcpy to GPU %d: %s", gpu,
		          cuda_strerror(r, ret, cerr, sizeof(cerr)));
		r->Free(base);
		free(b);
		return -EIO;
	}
	pthread_mutex_lock(&blocks_lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&blocks_lock);
	*buf = b->aligned;
	return 0;
}

void gpu_buf_free(const void *opts, void *buf)
{
	const struct cudart *r = cuda_runtime(NULL);
	struct gpu_block **pp, *b = NULL;

	(void)opts;
	if (!buf)
		return;
	pthread_mutex_lock(&blocks_lock);
	for (pp = &blocks; *pp; pp = &(*pp)->next)
		if ((*pp)->aligned == buf) {
			b = *pp;
			*pp = b->next;
			break;
		}
	pthread_mutex_unlock(&blocks_lock);
	if (r && b)
		r->Free(b->base);
	free(b);
}

/*
 * Synchronous copies into and out of a gpu_buf_alloc buffer (the store's staging on a GPU
 * engine): the runtime is loaded already, since gpu_buf_alloc made buf.
 */
int gpu_buf_copy_in(const void *opts, void *buf, size_t at, const void *src, size_t n)
{
	const struct cudart *r = cuda_runtime(NULL);

	(void)opts;
	return r && !r->Memcpy((char *)buf + at, src, n, cudaMemcpyHostToDevice) ? 0 : -EIO;
}

int gpu_buf_copy_out(const void *opts, const void *buf, size_t at, void *dst, size_t n)
{
	const struct cudart *r = cuda_runtime(NULL);

	(void)opts;
	return r && !r->Memcpy(dst, (const char *)buf + at, n, cudaMemcpyDeviceToHost) ? 0 : -EIO;
}

const char *const cuda_sched_names[] = {"blocking", "yield", "spin", NULL};

unsigned cuda_set_sched(const struct cudart *r, int sched, char *notes, size_t nlen)
{
	static const unsigned flags[] = {
	        [CUDA_SCHED_BLOCKING] = cudaDeviceScheduleBlockingSync,
	        [CUDA_SCHED_YIELD] = cudaDeviceScheduleYield,
	        [CUDA_SCHED_SPIN] = cudaDeviceScheduleSpin,
	};
	char e[256];
	int ret;

	if (sched < 0 || sched > CUDA_SCHED_SPIN)
		sched = CUDA_SCHED_BLOCKING;
	/* refused once the GPU's context is active with other flags: then CUDA's stays */
	ret = r->SetDeviceFlags(flags[sched]);
	if (ret)
		engine_appendf(notes, nlen, "; sched=%s refused by cudaSetDeviceFlags (%s)",
		               cuda_sched_names[sched], cuda_strerror(r, ret, e, sizeof(e)));
	else
		engine_appendf(notes, nlen, "; sched=%s%s", cuda_sched_names[sched],
		               sched == CUDA_SCHED_BLOCKING ? " (blocking-sync events)" : "");
	return sched == CUDA_SCHED_BLOCKING ? cudaEventBlockingSync : 0;
}

/* ---- cuFile ---------------------------------------------------------------------------- */

static pthread_once_t cf_once = PTHREAD_ONCE_INIT;
static struct cufile cf;
static const struct cufile *cf_ok;
static char cf_why[1024];

static bool param_bool(int param, bool *val)
{
	return cf.GetParameterBool && cf.GetParameterBool(param, val).err == CU_FILE_SUCCESS;
}

/*
 * Compatibility (POSIX) mode or true GDS, and why.  True GDS needs the nvidia-fs kernel module
 * (or, from CUDA 12.8, the kernel's PCI P2PDMA with use_pci_p2pdma in cufile.json); without
 * either cuFile falls back to POSIX reads through a bounce buffer when allow_compat_mode is
 * true, and fails otherwise.  force_compat_mode forces the fallback.
 */
static void describe_mode(void)
{
	bool force = false, allow = true, p2p = false;
	bool nvfs = access("/sys/module/nvidia_fs", F_OK) == 0 ||
	            access("/proc/driver/nvidia-fs/version", F_OK) == 0;
	const char *json = getenv("CUFILE_ENV_PATH_JSON");
	char src[PATH_MAX + 32];

	snprintf(src, sizeof(src), "%s", json && json[0] ? json : "/etc/cufile.json");
	param_bool(CUFILE_PARAM_FORCE_COMPAT_MODE, &force);
	param_bool(CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE, &allow);
	param_bool(CUFILE_PARAM_USE_PCIP2PDMA, &p2p);
	if (getenv("CUFILE_FORCE_COMPAT_MODE") &&
	    !strcmp(getenv("CUFILE_FORCE_COMPAT_MODE"), "true"))
		force = true;

	if (force) {
		cf.compat = true;
		msgf(cf.mode, sizeof(cf.mode),
		     "compat (POSIX) mode: forced (force_compat_mode in %s or "
		     "CUFILE_FORCE_COMPAT_MODE=true)",
		     src);
	} else if (cf.have_props && cf.props.nvfs.major_version && nvfs) {
		cf.compat = false;
		msgf(cf.mode, sizeof(cf.mode),
		     "true GDS mode: nvidia-fs %u.%u loaded%s%s (per file, cuFile still falls "
		     "back to POSIX for a filesystem or device it cannot DMA to)",
		     cf.props.nvfs.major_version, cf.props.nvfs.minor_version,
		     cf.props.nvfs.dstatusflags & (1u << CU_FILE_NVME_SUPPORTED) ? ", NVMe" : "",
		     cf.props.nvfs.dstatusflags & (1u << CU_FILE_NVMEOF_SUPPORTED) ? ", NVMe-oF"
		                                                                   : "");
	} else if (p2p) {
		cf.compat = false;
		msgf(cf.mode, sizeof(cf.mode),
		     "true GDS mode through PCI P2PDMA (use_pci_p2pdma in %s; no nvidia-fs "
		     "module needed)",
		     src);
	} else {
		cf.compat = true;
		msgf(cf.mode, sizeof(cf.mode),
		     "compat (POSIX) mode: the nvidia-fs kernel module is %s and PCI P2PDMA "
		     "is off, so cuFile reads through a host bounce buffer (allow_compat_mode "
		     "%s in %s); load nvidia-fs for true GDS",
		     nvfs ? "loaded but the driver reports no nvidia-fs version"
		          : "not loaded (/sys/module/nvidia_fs absent)",
		     allow ? "true" : "false", src);
	}
}

/*
 * The stream API's prerequisites: a cufile.json (CUFILE_ENV_PATH_JSON, else /etc/cufile.json)
 * with execution.parallel_io on, as cuFile reports it.  kvikio found cuFileReadAsync does not
 * work without the thread pool; wheels ship no cufile.json.
 */
static void check_async(void)
{
	const char *json = getenv("CUFILE_ENV_PATH_JSON");
	const char *src = json && json[0] ? json : "/etc/cufile.json";
	bool par = false;

	if (!cf.has_async)
		return;
	if (access(src, R_OK)) {
		msgf(cf.async_why, sizeof(cf.async_why),
		     "no cufile.json (%s is not readable) configures cuFile's thread pool, without "
		     "which the stream API can hang; write one with \"execution\": "
		     "{\"parallel_io\": true} and point CUFILE_ENV_PATH_JSON at it",
		     src);
		return;
	}
	if (cf.GetParameterBool && param_bool(CUFILE_PARAM_EXECUTION_PARALLEL_IO, &par) && !par) {
		msgf(cf.async_why, sizeof(cf.async_why),
		     "execution.parallel_io is off in %s, so cuFile has no thread pool for the "
		     "stream API; set it to true",
		     src);
		return;
	}
	cf.async_ok = true;
}

static void cf_close(void)
{
	if (cf_ok && cf.DriverClose)
		cf.DriverClose();
}

static void cf_load(void)
{
	char cerr[256];
	CUfileError_t st;
	void *h;

	if (!cuda_runtime(NULL)) {
		msgf(cf_why, sizeof(cf_why), "%s", rt_why);
		return;
	}
	h = find_lib(&cufile_spec, cf.path, sizeof(cf.path), cf_why, sizeof(cf_why));
	if (!h)
		return;
	if (resolve(h, cufile_syms, sizeof(cufile_syms) / sizeof(cufile_syms[0]), &cf, cf.path,
	            cufile_spec.install, cf_why, sizeof(cf_why)))
		return;
	cf.has_batch =
	        cf.BatchIOSetUp && cf.BatchIOSubmit && cf.BatchIOGetStatus && cf.BatchIODestroy;
	cf.has_async = cf.ReadAsync && cf.WriteAsync;
	if (cf.GetVersion && cf.GetVersion(&cf.version).err != CU_FILE_SUCCESS)
		cf.version = 0;
	/* cuFile versions count 1.0 as 1000; anything older predates the public release */
	if (cf.GetVersion && cf.version && cf.version < 1000) {
		msgf(cf_why, sizeof(cf_why), "%s is cuFile version %d, older than 1.0; %s", cf.path,
		     cf.version, cufile_spec.install);
		return;
	}
	st = cf.DriverOpen();
	if (st.err != CU_FILE_SUCCESS) {
		msgf(cf_why, sizeof(cf_why),
		     "cuFileDriverOpen (%s) failed: %s; without the nvidia-fs module cuFile "
		     "needs allow_compat_mode=true in cufile.json (CUFILE_ENV_PATH_JSON), and "
		     "CUFILE_LOGFILE_PATH / cufile.log says more",
		     cf.path, cufile_strerror(st, cerr, sizeof(cerr)));
		return;
	}
	cf.have_props =
	        cf.DriverGetProperties && cf.DriverGetProperties(&cf.props).err == CU_FILE_SUCCESS;
	/* The batch API can be present as symbols yet reported off by the driver. */
	if (cf.have_props && cf.props.fflags &&
	    !(cf.props.fflags & (1u << CU_FILE_BATCH_IO_SUPPORTED)))
		cf.has_batch = false;
	describe_mode();
	check_async();
	cf_ok = &cf;
	/* NVIDIA's samples close the driver before exit: its statistics and log are flushed */
	if (cf.DriverClose)
		atexit(cf_close);
}

const struct cufile *cuda_cufile(struct llmio_error *e)
{
	pthread_once(&cf_once, cf_load);
	if (!cf_ok)
		llmio_err(e, -ENODEV, "%s", cf_why);
	return cf_ok;
}
