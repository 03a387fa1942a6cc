// mlwarp's header for @wp.func_native snippets: Warp's C++ names for what a snippet sees (wp::float32, wp::vec_t,
// wp::mat_t, wp::quat_t, wp::transform_t, wp::array_t with wp::index / wp::address / wp::atomic_add), over mlwarp's
// value layouts (a vector's components in order, a matrix's rows, a quaternion x y z w, a transform p then q), and
// the conversion from mlwarp's array descriptor {data, shape[N], strides[N] in bytes} to Warp's array_t.
// Compiled by the host's C++ compiler for the CPU (__CUDA_ARCH__ undefined) and by nvcc for CUDA.
#pragma once

#include <stdint.h>
#include <math.h>
#include <string.h>

#if defined(__CUDACC__)
#define CUDA_CALLABLE __host__ __device__
#define WP_NATIVE_ENTRY extern "C" __device__
#else
#define CUDA_CALLABLE
#define WP_NATIVE_ENTRY extern "C" __attribute__((visibility("hidden")))
#endif
#define WP_TILE_SYNC() __syncthreads_if_cuda()

namespace wp {

typedef int8_t int8;
typedef uint8_t uint8;
typedef int16_t int16;
typedef uint16_t uint16;
typedef int32_t int32;
typedef uint32_t uint32;
typedef int64_t int64;
typedef uint64_t uint64;
typedef float float32;
typedef double float64;

// float16: its bits (the kernel's layout), converted to and from float32 for arithmetic
struct half {
    uint16_t u;
    CUDA_CALLABLE half() : u(0) {}
    CUDA_CALLABLE half(float f) : u(from_float(f)) {}
    CUDA_CALLABLE operator float() const { return to_float(u); }
    static CUDA_CALLABLE uint16_t from_float(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
        int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
        if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
        if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
        if (exp <= 0) {
            if (exp < -10) return (uint16_t)sign;
            mant |= 0x800000u;
            uint32_t shift = (uint32_t)(14 - exp), half_mant = mant >> shift, rest = mant & ((1u << shift) - 1u);
            uint32_t mid = 1u << (shift - 1);
            if (rest > mid || (rest == mid && (half_mant & 1u))) half_mant++;
            return (uint16_t)(sign | half_mant);
        }
        uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
        return (uint16_t)h;
    }
    static CUDA_CALLABLE float to_float(uint16_t h) {
        uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
        if (exp == 0x1f) x = sign | 0x7f800000u | (mant << 13);
        else if (exp != 0) x = sign | ((exp + 112u) << 23) | (mant << 13);
        else if (mant == 0) x = sign;
        else {
            exp = 113;
            while (!(mant & 0x400u)) { mant <<= 1; exp--; }
            x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
};
typedef half float16;

// -- scalars ------------------------------------------------------------------------------------------------------
template <typename T> CUDA_CALLABLE inline T min(T a, T b) { return a < b ? a : b; }
template <typename T> CUDA_CALLABLE inline T max(T a, T b) { return a > b ? a : b; }
template <typename T> CUDA_CALLABLE inline T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
template <typename T> CUDA_CALLABLE inline T abs(T x) { return x < T(0) ? -x : x; }
template <typename T> CUDA_CALLABLE inline T sign(T x) { return x < T(0) ? T(-1) : T(1); }
CUDA_CALLABLE inline float32 sqrt(float32 x) { return ::sqrtf(x); }
CUDA_CALLABLE inline float64 sqrt(float64 x) { return ::sqrt(x); }
CUDA_CALLABLE inline float32 sin(float32 x) { return ::sinf(x); }
CUDA_CALLABLE inline float64 sin(float64 x) { return ::sin(x); }
CUDA_CALLABLE inline float32 cos(float32 x) { return ::cosf(x); }
CUDA_CALLABLE inline float64 cos(float64 x) { return ::cos(x); }
CUDA_CALLABLE inline float32 exp(float32 x) { return ::expf(x); }
CUDA_CALLABLE inline float64 exp(float64 x) { return ::exp(x); }
CUDA_CALLABLE inline float32 log(float32 x) { return ::logf(x); }
CUDA_CALLABLE inline float64 log(float64 x) { return ::log(x); }
CUDA_CALLABLE inline float32 pow(float32 x, float32 y) { return ::powf(x, y); }
CUDA_CALLABLE inline float64 pow(float64 x, float64 y) { return ::pow(x, y); }
CUDA_CALLABLE inline float32 floor(float32 x) { return ::floorf(x); }
CUDA_CALLABLE inline float64 floor(float64 x) { return ::floor(x); }
CUDA_CALLABLE inline float32 ceil(float32 x) { return ::ceilf(x); }
CUDA_CALLABLE inline float64 ceil(float64 x) { return ::ceil(x); }
CUDA_CALLABLE inline float32 atan2(float32 y, float32 x) { return ::atan2f(y, x); }
CUDA_CALLABLE inline float64 atan2(float64 y, float64 x) { return ::atan2(y, x); }
template <typename T> CUDA_CALLABLE inline T add(T a, T b) { return a + b; }
template <typename T> CUDA_CALLABLE inline T sub(T a, T b) { return a - b; }
template <typename T> CUDA_CALLABLE inline T div(T a, T b) { return a / b; }

// -- vectors ------------------------------------------------------------------------------------------------------
template <unsigned Length, typename Type> struct vec_t {
    Type c[Length];
    CUDA_CALLABLE vec_t() : c() {}
    CUDA_CALLABLE vec_t(Type s) { for (unsigned i = 0; i < Length; ++i) c[i] = s; }
    template <typename... Rest> CUDA_CALLABLE vec_t(Type a, Type b, Rest... rest) : c{a, b, Type(rest)...} {
        static_assert(2 + sizeof...(Rest) == Length, "wp::vec_t: one value per component");
    }
    template <typename Other> CUDA_CALLABLE explicit vec_t(const vec_t<Length, Other>& o) {
        for (unsigned i = 0; i < Length; ++i) c[i] = Type(o.c[i]);
    }
    CUDA_CALLABLE Type operator[](int i) const { return c[i]; }
    CUDA_CALLABLE Type& operator[](int i) { return c[i]; }
};

#define WP_VEC_BINARY(op)                                                                                             \
    template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> operator op(vec_t<N, T> a, vec_t<N, T> b) {    \
        for (unsigned i = 0; i < N; ++i) a.c[i] = a.c[i] op b.c[i];                                                   \
        return a;                                                                                                     \
    }                                                                                                                 \
    template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T>& operator op##=(vec_t<N, T>& a, vec_t<N, T> b) { \
        return a = a op b;                                                                                            \
    }
WP_VEC_BINARY(+)
WP_VEC_BINARY(-)
#undef WP_VEC_BINARY

template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> operator-(vec_t<N, T> a) {
    for (unsigned i = 0; i < N; ++i) a.c[i] = -a.c[i];
    return a;
}
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> operator*(vec_t<N, T> a, T s) {
    for (unsigned i = 0; i < N; ++i) a.c[i] = a.c[i] * s;
    return a;
}
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> operator*(T s, vec_t<N, T> a) { return a * s; }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> operator/(vec_t<N, T> a, T s) {
    for (unsigned i = 0; i < N; ++i) a.c[i] = a.c[i] / s;
    return a;
}
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T>& operator*=(vec_t<N, T>& a, T s) { return a = a * s; }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T>& operator/=(vec_t<N, T>& a, T s) { return a = a / s; }
template <unsigned N, typename T> CUDA_CALLABLE inline bool operator==(vec_t<N, T> a, vec_t<N, T> b) {
    for (unsigned i = 0; i < N; ++i)
        if (!(a.c[i] == b.c[i])) return false;
    return true;
}
template <unsigned N, typename T> CUDA_CALLABLE inline bool operator!=(vec_t<N, T> a, vec_t<N, T> b) { return !(a == b); }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> add(vec_t<N, T> a, vec_t<N, T> b) { return a + b; }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> sub(vec_t<N, T> a, vec_t<N, T> b) { return a - b; }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> mul(vec_t<N, T> a, T s) { return a * s; }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> mul(T s, vec_t<N, T> a) { return a * s; }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> div(vec_t<N, T> a, T s) { return a / s; }
template <unsigned N, typename T> CUDA_CALLABLE inline T dot(vec_t<N, T> a, vec_t<N, T> b) {
    T s = T(0);
    for (unsigned i = 0; i < N; ++i) s += a.c[i] * b.c[i];
    return s;
}
template <typename T> CUDA_CALLABLE inline vec_t<3, T> cross(vec_t<3, T> a, vec_t<3, T> b) {
    return vec_t<3, T>(a.c[1] * b.c[2] - a.c[2] * b.c[1], a.c[2] * b.c[0] - a.c[0] * b.c[2],
                       a.c[0] * b.c[1] - a.c[1] * b.c[0]);
}
template <unsigned N, typename T> CUDA_CALLABLE inline T length_sq(vec_t<N, T> a) { return dot(a, a); }
template <unsigned N, typename T> CUDA_CALLABLE inline T length(vec_t<N, T> a) { return sqrt(dot(a, a)); }
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> normalize(vec_t<N, T> a) {
    T l = length(a);
    return l > T(0) ? a / l : vec_t<N, T>();
}
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> min(vec_t<N, T> a, vec_t<N, T> b) {
    for (unsigned i = 0; i < N; ++i) a.c[i] = min(a.c[i], b.c[i]);
    return a;
}
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> max(vec_t<N, T> a, vec_t<N, T> b) {
    for (unsigned i = 0; i < N; ++i) a.c[i] = max(a.c[i], b.c[i]);
    return a;
}

// -- matrices (row-major: data[row][column]) ---------------------------------------------------------------------
template <unsigned Rows, unsigned Cols, typename Type> struct mat_t {
    Type data[Rows][Cols];
    CUDA_CALLABLE mat_t() : data() {}
    CUDA_CALLABLE mat_t(Type s) {
        for (unsigned i = 0; i < Rows; ++i)
            for (unsigned j = 0; j < Cols; ++j) data[i][j] = s;
    }
    // Rows * Cols scalars in row-major order, or Cols column vectors (Warp's constructors)
    template <typename... Rest> CUDA_CALLABLE mat_t(Type a, Type b, Rest... rest) {
        static_assert(2 + sizeof...(Rest) == Rows * Cols, "wp::mat_t: one value per element, row by row");
        Type values[Rows * Cols] = {a, b, Type(rest)...};
        for (unsigned k = 0; k < Rows * Cols; ++k) data[k / Cols][k % Cols] = values[k];
    }
    template <typename... Rest> CUDA_CALLABLE mat_t(vec_t<Rows, Type> c0, Rest... rest) {
        static_assert(1 + sizeof...(Rest) == Cols, "wp::mat_t: one vector per column");
        vec_t<Rows, Type> cols[Cols] = {c0, rest...};
        for (unsigned j = 0; j < Cols; ++j)
            for (unsigned i = 0; i < Rows; ++i) data[i][j] = cols[j].c[i];
    }
    CUDA_CALLABLE vec_t<Cols, Type> get_row(int i) const {
        vec_t<Cols, Type> r;
        for (unsigned j = 0; j < Cols; ++j) r.c[j] = data[i][j];
        return r;
    }
    CUDA_CALLABLE vec_t<Rows, Type> get_col(int j) const {
        vec_t<Rows, Type> r;
        for (unsigned i = 0; i < Rows; ++i) r.c[i] = data[i][j];
        return r;
    }
    CUDA_CALLABLE void set_row(int i, vec_t<Cols, Type> v) {
        for (unsigned j = 0; j < Cols; ++j) data[i][j] = v.c[j];
    }
    CUDA_CALLABLE void set_col(int j, vec_t<Rows, Type> v) {
        for (unsigned i = 0; i < Rows; ++i) data[i][j] = v.c[i];
    }
    CUDA_CALLABLE Type operator()(int i, int j) const { return data[i][j]; }
    CUDA_CALLABLE Type& operator()(int i, int j) { return data[i][j]; }
};

template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline mat_t<R, C, T> operator+(mat_t<R, C, T> a, const mat_t<R, C, T>& b) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) a.data[i][j] += b.data[i][j];
    return a;
}
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline mat_t<R, C, T> operator-(mat_t<R, C, T> a, const mat_t<R, C, T>& b) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) a.data[i][j] -= b.data[i][j];
    return a;
}
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline mat_t<R, C, T> operator*(mat_t<R, C, T> a, T s) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) a.data[i][j] *= s;
    return a;
}
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline mat_t<R, C, T> operator*(T s, mat_t<R, C, T> a) { return a * s; }
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline mat_t<R, C, T>& operator+=(mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { return a = a + b; }
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline mat_t<R, C, T>& operator-=(mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { return a = a - b; }
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline vec_t<R, T> mul(const mat_t<R, C, T>& m, vec_t<C, T> v) {
    vec_t<R, T> r;
    for (unsigned i = 0; i < R; ++i) r.c[i] = dot(m.get_row(i), v);
    return r;
}
template <unsigned R, unsigned K, unsigned C, typename T>
CUDA_CALLABLE inline mat_t<R, C, T> mul(const mat_t<R, K, T>& a, const mat_t<K, C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j)
            for (unsigned k = 0; k < K; ++k) r.data[i][j] += a.data[i][k] * b.data[k][j];
    return r;
}
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline vec_t<R, T> operator*(const mat_t<R, C, T>& m, vec_t<C, T> v) { return mul(m, v); }
template <unsigned R, unsigned K, unsigned C, typename T>
CUDA_CALLABLE inline mat_t<R, C, T> operator*(const mat_t<R, K, T>& a, const mat_t<K, C, T>& b) { return mul(a, b); }
template <unsigned R, unsigned C, typename T> CUDA_CALLABLE inline mat_t<C, R, T> transpose(const mat_t<R, C, T>& m) {
    mat_t<C, R, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) r.data[j][i] = m.data[i][j];
    return r;
}
template <unsigned N, typename T> CUDA_CALLABLE inline mat_t<N, N, T> identity() {
    mat_t<N, N, T> r;
    for (unsigned i = 0; i < N; ++i) r.data[i][i] = T(1);
    return r;
}

// -- quaternions (x, y, z, w) and transforms (p, then q) ----------------------------------------------------------
template <typename Type> struct quat_t {
    Type x, y, z, w;
    CUDA_CALLABLE quat_t(Type x = Type(0), Type y = Type(0), Type z = Type(0), Type w = Type(0)) : x(x), y(y), z(z), w(w) {}
    CUDA_CALLABLE explicit quat_t(const vec_t<3, Type>& v, Type w = Type(0)) : x(v.c[0]), y(v.c[1]), z(v.c[2]), w(w) {}
    CUDA_CALLABLE Type operator[](int i) const { return (&x)[i]; }
    CUDA_CALLABLE Type& operator[](int i) { return (&x)[i]; }
};
template <typename T> CUDA_CALLABLE inline quat_t<T> quat_identity() { return quat_t<T>(T(0), T(0), T(0), T(1)); }
template <typename T> CUDA_CALLABLE inline quat_t<T> quat_inverse(const quat_t<T>& q) { return quat_t<T>(-q.x, -q.y, -q.z, q.w); }
template <typename T> CUDA_CALLABLE inline quat_t<T> mul(const quat_t<T>& a, const quat_t<T>& b) {
    return quat_t<T>(a.w * b.x + b.w * a.x + a.y * b.z - b.y * a.z, a.w * b.y + b.w * a.y + a.z * b.x - b.z * a.x,
                     a.w * b.z + b.w * a.z + a.x * b.y - b.x * a.y, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
template <typename T> CUDA_CALLABLE inline quat_t<T> operator*(const quat_t<T>& a, const quat_t<T>& b) { return mul(a, b); }
template <typename T> CUDA_CALLABLE inline vec_t<3, T> quat_rotate(const quat_t<T>& q, const vec_t<3, T>& x) {
    T c = (T(2) * q.w * q.w - T(1));
    vec_t<3, T> v(q.x, q.y, q.z);
    return x * c + cross(v, x) * q.w * T(2) + v * dot(v, x) * T(2);
}
template <typename T> CUDA_CALLABLE inline vec_t<3, T> quat_rotate_inv(const quat_t<T>& q, const vec_t<3, T>& x) {
    return quat_rotate(quat_inverse(q), x);
}

template <typename Type> struct transform_t {
    vec_t<3, Type> p;
    quat_t<Type> q;
    CUDA_CALLABLE transform_t(vec_t<3, Type> p = vec_t<3, Type>(), quat_t<Type> q = quat_t<Type>()) : p(p), q(q) {}
    CUDA_CALLABLE Type operator[](int i) const { return i < 3 ? p.c[i] : q[i - 3]; }
    CUDA_CALLABLE Type& operator[](int i) { return i < 3 ? p.c[i] : q[i - 3]; }
};
template <typename T> CUDA_CALLABLE inline vec_t<3, T> transform_point(const transform_t<T>& t, const vec_t<3, T>& x) {
    return t.p + quat_rotate(t.q, x);
}
template <typename T> CUDA_CALLABLE inline vec_t<3, T> transform_vector(const transform_t<T>& t, const vec_t<3, T>& x) {
    return quat_rotate(t.q, x);
}
template <typename T> CUDA_CALLABLE inline transform_t<T> mul(const transform_t<T>& a, const transform_t<T>& b) {
    return transform_t<T>(quat_rotate(a.q, b.p) + a.p, mul(a.q, b.q));
}

#define WP_VECTOR_NAMES(suffix, T)                                                                                    \
    typedef vec_t<2, T> vec2##suffix;                                                                                 \
    typedef vec_t<3, T> vec3##suffix;                                                                                 \
    typedef vec_t<4, T> vec4##suffix;                                                                                 \
    typedef mat_t<2, 2, T> mat22##suffix;                                                                             \
    typedef mat_t<3, 3, T> mat33##suffix;                                                                             \
    typedef mat_t<4, 4, T> mat44##suffix;                                                                             \
    typedef quat_t<T> quat##suffix;                                                                                   \
    typedef transform_t<T> transform##suffix;                                                                         \
    typedef vec_t<6, T> spatial_vector##suffix;                                                                       \
    typedef mat_t<6, 6, T> spatial_matrix##suffix;
WP_VECTOR_NAMES(, float32)
WP_VECTOR_NAMES(f, float32)
WP_VECTOR_NAMES(d, float64)
WP_VECTOR_NAMES(h, half)
#undef WP_VECTOR_NAMES
typedef vec_t<2, int32> vec2i;
typedef vec_t<3, int32> vec3i;
typedef vec_t<4, int32> vec4i;
typedef vec_t<2, uint32> vec2ui;
typedef vec_t<3, uint32> vec3ui;
typedef vec_t<4, uint32> vec4ui;

// -- arrays: Warp's array_t (strides in bytes), made from mlwarp's descriptor ------------------------------------
struct shape_t {
    int dims[4];
    CUDA_CALLABLE shape_t() : dims() {}
    CUDA_CALLABLE int operator[](int i) const { return dims[i]; }
    CUDA_CALLABLE int& operator[](int i) { return dims[i]; }
};

template <typename T> struct array_t {
    T* data;
    T* grad;
    shape_t shape;
    int strides[4];
    int ndim;
    CUDA_CALLABLE array_t() : data(nullptr), grad(nullptr), shape(), strides(), ndim(0) {}
    CUDA_CALLABLE array_t(T* data, int size, T* grad = nullptr) : data(data), grad(grad), shape(), strides(), ndim(1) {
        shape.dims[0] = size;
        strides[0] = sizeof(T);
    }
    CUDA_CALLABLE bool empty() const { return data == nullptr; }
    CUDA_CALLABLE int size() const {
        int n = ndim > 0 ? 1 : 0;
        for (int d = 0; d < ndim; ++d) n *= shape.dims[d];
        return n;
    }
    CUDA_CALLABLE operator T*() const { return data; }  // a[i]: the i-th element of contiguous memory, as Warp's
};

template <typename T> CUDA_CALLABLE inline T* address(const array_t<T>& a, int i) {
    return (T*)((char*)a.data + (int64)i * a.strides[0]);
}
template <typename T> CUDA_CALLABLE inline T* address(const array_t<T>& a, int i, int j) {
    return (T*)((char*)a.data + (int64)i * a.strides[0] + (int64)j * a.strides[1]);
}
template <typename T> CUDA_CALLABLE inline T* address(const array_t<T>& a, int i, int j, int k) {
    return (T*)((char*)a.data + (int64)i * a.strides[0] + (int64)j * a.strides[1] + (int64)k * a.strides[2]);
}
template <typename T> CUDA_CALLABLE inline T* address(const array_t<T>& a, int i, int j, int k, int l) {
    return (T*)((char*)a.data + (int64)i * a.strides[0] + (int64)j * a.strides[1] + (int64)k * a.strides[2] +
                (int64)l * a.strides[3]);
}
template <typename T, typename... I> CUDA_CALLABLE inline T& index(const array_t<T>& a, I... i) { return *address(a, i...); }
template <typename T, typename... I> CUDA_CALLABLE inline T load(const array_t<T>& a, I... i) { return *address(a, i...); }
template <typename T> CUDA_CALLABLE inline void array_store(const array_t<T>& a, int i, T v) { *address(a, i) = v; }

// -- atomics: the old value ---------------------------------------------------------------------------------------
#if defined(__CUDA_ARCH__)
template <typename T> __device__ inline T atomic_add(T* p, T v) { return atomicAdd(p, v); }
template <typename T> __device__ inline T atomic_sub(T* p, T v) { return atomicAdd(p, T(-v)); }
__device__ inline int32 atomic_min(int32* p, int32 v) { return atomicMin(p, v); }
__device__ inline int32 atomic_max(int32* p, int32 v) { return atomicMax(p, v); }
__device__ inline uint32 atomic_min(uint32* p, uint32 v) { return atomicMin(p, v); }
__device__ inline uint32 atomic_max(uint32* p, uint32 v) { return atomicMax(p, v); }
__device__ inline float32 atomic_min(float32* p, float32 v) {
    int32 old = __float_as_int(*p);
    while (v < __int_as_float(old)) {
        int32 seen = atomicCAS((int32*)p, old, __float_as_int(v));
        if (seen == old) break;
        old = seen;
    }
    return __int_as_float(old);
}
__device__ inline float32 atomic_max(float32* p, float32 v) {
    int32 old = __float_as_int(*p);
    while (v > __int_as_float(old)) {
        int32 seen = atomicCAS((int32*)p, old, __float_as_int(v));
        if (seen == old) break;
        old = seen;
    }
    return __int_as_float(old);
}
#else
// scalars: a compare-and-swap loop on the value's bits (integers: the hardware's fetch-add)
template <typename T, typename Op> inline T atomic_update(T* p, T v, Op op) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T next = op(old, v);
    while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) next = op(old, v);
    return old;
}
template <typename T> inline T atomic_add(T* p, T v) { return atomic_update(p, v, [](T a, T b) { return T(a + b); }); }
template <typename T> inline T atomic_sub(T* p, T v) { return atomic_update(p, v, [](T a, T b) { return T(a - b); }); }
template <typename T> inline T atomic_min(T* p, T v) { return atomic_update(p, v, [](T a, T b) { return b < a ? b : a; }); }
template <typename T> inline T atomic_max(T* p, T v) { return atomic_update(p, v, [](T a, T b) { return b > a ? b : a; }); }
#endif
// a vector's or matrix's components one by one (each atomic)
template <unsigned N, typename T> CUDA_CALLABLE inline vec_t<N, T> atomic_add(vec_t<N, T>* p, vec_t<N, T> v) {
    vec_t<N, T> old;
    for (unsigned i = 0; i < N; ++i) old.c[i] = atomic_add(&p->c[i], v.c[i]);
    return old;
}
namespace detail {
template <typename T, typename V> CUDA_CALLABLE inline T atomic_add_at(const array_t<T>& a, int i, V v) { return atomic_add(address(a, i), T(v)); }
template <typename T, typename V> CUDA_CALLABLE inline T atomic_add_at(const array_t<T>& a, int i, int j, V v) { return atomic_add(address(a, i, j), T(v)); }
template <typename T, typename V> CUDA_CALLABLE inline T atomic_add_at(const array_t<T>& a, int i, int j, int k, V v) { return atomic_add(address(a, i, j, k), T(v)); }
template <typename T, typename V> CUDA_CALLABLE inline T atomic_add_at(const array_t<T>& a, int i, int j, int k, int l, V v) { return atomic_add(address(a, i, j, k, l), T(v)); }
}  // namespace detail
// wp::atomic_add(a, i, ..., value): Warp's array form
template <typename T, typename... I> CUDA_CALLABLE inline T atomic_add(const array_t<T>& a, I... i_then_value) {
    return detail::atomic_add_at(a, i_then_value...);
}

}  // namespace wp

// -- mlwarp's calling convention: each argument by the address of its copy; an array by its descriptor's ---------
namespace mlwarp_native {
template <typename T, int N> struct descriptor {
    T* data;
    int64_t shape[N];
    int64_t strides[N];
};
template <typename T, int N> CUDA_CALLABLE inline wp::array_t<T> to_array(const void* slot, const void* grad_slot = nullptr) {
    const descriptor<T, N>& d = *(const descriptor<T, N>*)slot;
    wp::array_t<T> a;
    a.data = d.data;
    a.grad = grad_slot ? ((const descriptor<T, N>*)grad_slot)->data : nullptr;
    a.ndim = N;
    for (int k = 0; k < N; ++k) {
        a.shape.dims[k] = (int)d.shape[k];
        a.strides[k] = (int)d.strides[k];
    }
    return a;
}
template <typename T, int N> CUDA_CALLABLE inline void from_array(void* slot, const wp::array_t<T>& a) {
    descriptor<T, N>& d = *(descriptor<T, N>*)slot;
    d.data = a.data;
    for (int k = 0; k < N; ++k) {
        d.shape[k] = k < a.ndim ? a.shape.dims[k] : 1;
        d.strides[k] = k < a.ndim ? a.strides[k] : (int64_t)sizeof(T);
    }
}
}  // namespace mlwarp_native

#if defined(__CUDA_ARCH__)
__device__ inline void __syncthreads_if_cuda() { __syncthreads(); }
#else
inline void __syncthreads_if_cuda() {}
#endif
