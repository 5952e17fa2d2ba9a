/* rdb.c -- DUMP and RESTORE: values in Redis 7.0's RDB encoding (rdb_int.h).
 *
 * The writer produces what redis-server 7.0.15 produces for the same value, byte for byte,
 * wherever Redis itself is deterministic: the encoding follows the one the fake reports
 * through OBJECT ENCODING (listpack, intset, quicklist, or the hash table / skiplist
 * forms), strings longer than 20 bytes are LZF-compressed as Redis's lzf_c.c compresses
 * them, listpacks are built element by element with Redis's encodings.  A hash table's
 * order is Redis's own (not reproducible): sets and hashes in that form hold the same
 * members, in the fake's order.  A list is cut into quicklist nodes as RPUSH of its
 * elements cuts it.
 *
 * The reader accepts every payload 7.0 writes and the older forms 7.0 still loads (plain
 * lists, ASCII scores, the ziplists of Redis 6, pre-7.0 streams), and decides encodings
 * as rdbLoadObject does.  It decodes
 * every listpack and intset completely (the fake keeps no listpacks), so a structurally
 * bad payload is refused even where Redis's shallow check would take it.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "rdb_int.h"
#include "stream_int.h"

/* ----- CRC64 ----------------------------------------------------------------------------- */

/* The Jones polynomial 0xad93d23594c935a9, bit-reversed for the reflected form. */
#define CRC64_POLY_REFLECTED 0x95ac9329ac4bc9b5ULL

/* crc64_table[i]: the CRC of byte i alone, eight shifts of the reflected polynomial
 * (generated once from CRC64_POLY_REFLECTED; test_rdb_file checks it against the bitwise
 * form), so a byte costs one lookup: an RDB file is checksummed whole. */
static const uint64_t crc64_table[256] = {
    0x0000000000000000ULL, 0x7ad870c830358979ULL, 0xf5b0e190606b12f2ULL,
    0x8f689158505e9b8bULL, 0xc038e5739841b68fULL, 0xbae095bba8743ff6ULL,
    0x358804e3f82aa47dULL, 0x4f50742bc81f2d04ULL, 0xab28ecb46814fe75ULL,
    0xd1f09c7c5821770cULL, 0x5e980d24087fec87ULL, 0x24407dec384a65feULL,
    0x6b1009c7f05548faULL, 0x11c8790fc060c183ULL, 0x9ea0e857903e5a08ULL,
    0xe478989fa00bd371ULL, 0x7d08ff3b88be6f81ULL, 0x07d08ff3b88be6f8ULL,
    0x88b81eabe8d57d73ULL, 0xf2606e63d8e0f40aULL, 0xbd301a4810ffd90eULL,
    0xc7e86a8020ca5077ULL, 0x4880fbd87094cbfcULL, 0x32588b1040a14285ULL,
    0xd620138fe0aa91f4ULL, 0xacf86347d09f188dULL, 0x2390f21f80c18306ULL,
    0x594882d7b0f40a7fULL, 0x1618f6fc78eb277bULL, 0x6cc0863448deae02ULL,
    0xe3a8176c18803589ULL, 0x997067a428b5bcf0ULL, 0xfa11fe77117cdf02ULL,
    0x80c98ebf2149567bULL, 0x0fa11fe77117cdf0ULL, 0x75796f2f41224489ULL,
    0x3a291b04893d698dULL, 0x40f16bccb908e0f4ULL, 0xcf99fa94e9567b7fULL,
    0xb5418a5cd963f206ULL, 0x513912c379682177ULL, 0x2be1620b495da80eULL,
    0xa489f35319033385ULL, 0xde51839b2936bafcULL, 0x9101f7b0e12997f8ULL,
    0xebd98778d11c1e81ULL, 0x64b116208142850aULL, 0x1e6966e8b1770c73ULL,
    0x8719014c99c2b083ULL, 0xfdc17184a9f739faULL, 0x72a9e0dcf9a9a271ULL,
    0x08719014c99c2b08ULL, 0x4721e43f0183060cULL, 0x3df994f731b68f75ULL,
    0xb29105af61e814feULL, 0xc849756751dd9d87ULL, 0x2c31edf8f1d64ef6ULL,
    0x56e99d30c1e3c78fULL, 0xd9810c6891bd5c04ULL, 0xa3597ca0a188d57dULL,
    0xec09088b6997f879ULL, 0x96d1784359a27100ULL, 0x19b9e91b09fcea8bULL,
    0x636199d339c963f2ULL, 0xdf7adabd7a6e2d6fULL, 0xa5a2aa754a5ba416ULL,
    0x2aca3b2d1a053f9dULL, 0x50124be52a30b6e4ULL, 0x1f423fcee22f9be0ULL,
    0x659a4f06d21a1299ULL, 0xeaf2de5e82448912ULL, 0x902aae96b271006bULL,
    0x74523609127ad31aULL, 0x0e8a46c1224f5a63ULL, 0x81e2d7997211c1e8ULL,
    0xfb3aa75142244891ULL, 0xb46ad37a8a3b6595ULL, 0xceb2a3b2ba0eececULL,
    0x41da32eaea507767ULL, 0x3b024222da65fe1eULL, 0xa2722586f2d042eeULL,
    0xd8aa554ec2e5cb97ULL, 0x57c2c41692bb501cULL, 0x2d1ab4dea28ed965ULL,
    0x624ac0f56a91f461ULL, 0x1892b03d5aa47d18ULL, 0x97fa21650afae693ULL,
    0xed2251ad3acf6feaULL, 0x095ac9329ac4bc9bULL, 0x7382b9faaaf135e2ULL,
    0xfcea28a2faafae69ULL, 0x8632586aca9a2710ULL, 0xc9622c4102850a14ULL,
    0xb3ba5c8932b0836dULL, 0x3cd2cdd162ee18e6ULL, 0x460abd1952db919fULL,
    0x256b24ca6b12f26dULL, 0x5fb354025b277b14ULL, 0xd0dbc55a0b79e09fULL,
    0xaa03b5923b4c69e6ULL, 0xe553c1b9f35344e2ULL, 0x9f8bb171c366cd9bULL,
    0x10e3202993385610ULL, 0x6a3b50e1a30ddf69ULL, 0x8e43c87e03060c18ULL,
    0xf49bb8b633338561ULL, 0x7bf329ee636d1eeaULL, 0x012b592653589793ULL,
    0x4e7b2d0d9b47ba97ULL, 0x34a35dc5ab7233eeULL, 0xbbcbcc9dfb2ca865ULL,
    0xc113bc55cb19211cULL, 0x5863dbf1e3ac9decULL, 0x22bbab39d3991495ULL,
    0xadd33a6183c78f1eULL, 0xd70b4aa9b3f20667ULL, 0x985b3e827bed2b63ULL,
    0xe2834e4a4bd8a21aULL, 0x6debdf121b863991ULL, 0x1733afda2bb3b0e8ULL,
    0xf34b37458bb86399ULL, 0x8993478dbb8deae0ULL, 0x06fbd6d5ebd3716bULL,
    0x7c23a61ddbe6f812ULL, 0x3373d23613f9d516ULL, 0x49aba2fe23cc5c6fULL,
    0xc6c333a67392c7e4ULL, 0xbc1b436e43a74e9dULL, 0x95ac9329ac4bc9b5ULL,
    0xef74e3e19c7e40ccULL, 0x601c72b9cc20db47ULL, 0x1ac40271fc15523eULL,
    0x5594765a340a7f3aULL, 0x2f4c0692043ff643ULL, 0xa02497ca54616dc8ULL,
    0xdafce7026454e4b1ULL, 0x3e847f9dc45f37c0ULL, 0x445c0f55f46abeb9ULL,
    0xcb349e0da4342532ULL, 0xb1eceec59401ac4bULL, 0xfebc9aee5c1e814fULL,
    0x8464ea266c2b0836ULL, 0x0b0c7b7e3c7593bdULL, 0x71d40bb60c401ac4ULL,
    0xe8a46c1224f5a634ULL, 0x927c1cda14c02f4dULL, 0x1d148d82449eb4c6ULL,
    0x67ccfd4a74ab3dbfULL, 0x289c8961bcb410bbULL, 0x5244f9a98c8199c2ULL,
    0xdd2c68f1dcdf0249ULL, 0xa7f41839ecea8b30ULL, 0x438c80a64ce15841ULL,
    0x3954f06e7cd4d138ULL, 0xb63c61362c8a4ab3ULL, 0xcce411fe1cbfc3caULL,
    0x83b465d5d4a0eeceULL, 0xf96c151de49567b7ULL, 0x76048445b4cbfc3cULL,
    0x0cdcf48d84fe7545ULL, 0x6fbd6d5ebd3716b7ULL, 0x15651d968d029fceULL,
    0x9a0d8ccedd5c0445ULL, 0xe0d5fc06ed698d3cULL, 0xaf85882d2576a038ULL,
    0xd55df8e515432941ULL, 0x5a3569bd451db2caULL, 0x20ed197575283bb3ULL,
    0xc49581ead523e8c2ULL, 0xbe4df122e51661bbULL, 0x3125607ab548fa30ULL,
    0x4bfd10b2857d7349ULL, 0x04ad64994d625e4dULL, 0x7e7514517d57d734ULL,
    0xf11d85092d094cbfULL, 0x8bc5f5c11d3cc5c6ULL, 0x12b5926535897936ULL,
    0x686de2ad05bcf04fULL, 0xe70573f555e26bc4ULL, 0x9ddd033d65d7e2bdULL,
    0xd28d7716adc8cfb9ULL, 0xa85507de9dfd46c0ULL, 0x273d9686cda3dd4bULL,
    0x5de5e64efd965432ULL, 0xb99d7ed15d9d8743ULL, 0xc3450e196da80e3aULL,
    0x4c2d9f413df695b1ULL, 0x36f5ef890dc31cc8ULL, 0x79a59ba2c5dc31ccULL,
    0x037deb6af5e9b8b5ULL, 0x8c157a32a5b7233eULL, 0xf6cd0afa9582aa47ULL,
    0x4ad64994d625e4daULL, 0x300e395ce6106da3ULL, 0xbf66a804b64ef628ULL,
    0xc5bed8cc867b7f51ULL, 0x8aeeace74e645255ULL, 0xf036dc2f7e51db2cULL,
    0x7f5e4d772e0f40a7ULL, 0x05863dbf1e3ac9deULL, 0xe1fea520be311aafULL,
    0x9b26d5e88e0493d6ULL, 0x144e44b0de5a085dULL, 0x6e963478ee6f8124ULL,
    0x21c640532670ac20ULL, 0x5b1e309b16452559ULL, 0xd476a1c3461bbed2ULL,
    0xaeaed10b762e37abULL, 0x37deb6af5e9b8b5bULL, 0x4d06c6676eae0222ULL,
    0xc26e573f3ef099a9ULL, 0xb8b627f70ec510d0ULL, 0xf7e653dcc6da3dd4ULL,
    0x8d3e2314f6efb4adULL, 0x0256b24ca6b12f26ULL, 0x788ec2849684a65fULL,
    0x9cf65a1b368f752eULL, 0xe62e2ad306bafc57ULL, 0x6946bb8b56e467dcULL,
    0x139ecb4366d1eea5ULL, 0x5ccebf68aecec3a1ULL, 0x2616cfa09efb4ad8ULL,
    0xa97e5ef8cea5d153ULL, 0xd3a62e30fe90582aULL, 0xb0c7b7e3c7593bd8ULL,
    0xca1fc72bf76cb2a1ULL, 0x45775673a732292aULL, 0x3faf26bb9707a053ULL,
    0x70ff52905f188d57ULL, 0x0a2722586f2d042eULL, 0x854fb3003f739fa5ULL,
    0xff97c3c80f4616dcULL, 0x1bef5b57af4dc5adULL, 0x61372b9f9f784cd4ULL,
    0xee5fbac7cf26d75fULL, 0x9487ca0fff135e26ULL, 0xdbd7be24370c7322ULL,
    0xa10fceec0739fa5bULL, 0x2e675fb4576761d0ULL, 0x54bf2f7c6752e8a9ULL,
    0xcdcf48d84fe75459ULL, 0xb71738107fd2dd20ULL, 0x387fa9482f8c46abULL,
    0x42a7d9801fb9cfd2ULL, 0x0df7adabd7a6e2d6ULL, 0x772fdd63e7936bafULL,
    0xf8474c3bb7cdf024ULL, 0x829f3cf387f8795dULL, 0x66e7a46c27f3aa2cULL,
    0x1c3fd4a417c62355ULL, 0x935745fc4798b8deULL, 0xe98f353477ad31a7ULL,
    0xa6df411fbfb21ca3ULL, 0xdc0731d78f8795daULL, 0x536fa08fdfd90e51ULL,
    0x29b7d047efec8728ULL,
};

uint64_t fri_crc64(uint64_t crc, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) crc = crc64_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

uint64_t fri_crc64_bitwise(uint64_t crc, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        crc ^= b[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (CRC64_POLY_REFLECTED & (0 - (crc & 1)));
    }
    return crc;
}

/* ----- LZF ---------------------------------------------------------------------------------- */

/* The format: 000LLLLL and L+1 literal bytes; LLLooooo oooooooo, a back reference of
 * L+2 bytes at distance o+1; 111ooooo LLLLLLLL oooooooo, one of L+9 bytes. */
#define LZF_HSIZE (1u << 16)
#define LZF_MAX_LIT 32
#define LZF_MAX_OFF 8192
#define LZF_MAX_REF 264

/* The hash of the three bytes at in[i] given the running value h (which also keeps the
 * byte before them, as Redis's unsigned int does). */
static inline uint32_t lzf_next(uint32_t h, const unsigned char *in, size_t i)
{
    return (h << 8) | in[i + 2];
}
static inline uint32_t lzf_idx(uint32_t h) { return ((h >> 8) - h * 5) & (LZF_HSIZE - 1); }

size_t fri_lzf_compress(const void *in_data, size_t in_len, void *out_data, size_t out_len)
{
    const unsigned char *in = in_data;
    unsigned char *out = out_data;
    if (in_len < 3 || !out_len) return 0;
    /* positions + 1 of the last occurrence of each hash; 0 = none */
    uint32_t *htab = fri_calloc(LZF_HSIZE, sizeof(*htab));
    if (!htab) return 0;
    size_t ip = 0, op = 1; /* op - lit - 1 is the current literal run's header */
    int lit = 0;
    uint32_t h = (uint32_t)in[0] << 8 | in[1];
    size_t result = 0;
    while (ip + 2 < in_len) {
        h = lzf_next(h, in, ip);
        uint32_t *slot = &htab[lzf_idx(h)];
        size_t ref = *slot; /* position + 1 */
        *slot = (uint32_t)(ip + 1);
        size_t r = ref ? ref - 1 : 0;
        if (ref && r > 0 && ip - r - 1 < LZF_MAX_OFF && in[r + 2] == in[ip + 2] &&
            in[r] == in[ip] && in[r + 1] == in[ip + 1]) {
            size_t off = ip - r - 1;
            size_t len = 2;
            size_t maxlen = in_len - ip - len;
            if (maxlen > LZF_MAX_REF) maxlen = LZF_MAX_REF;
            if (op + 3 + 1 >= out_len && op - !lit + 3 + 1 >= out_len) goto done;
            out[op - lit - 1] = (unsigned char)(lit - 1); /* stop the run */
            op -= !lit;                                  /* an empty run is undone */
            int stop = 0;
            if (maxlen > 16) {
                for (int k = 0; k < 16; k++) {
                    len++;
                    if (in[r + len] != in[ip + len]) {
                        stop = 1;
                        break;
                    }
                }
            }
            if (!stop) {
                do
                    len++;
                while (len < maxlen && in[r + len] == in[ip + len]);
            }
            len -= 2;
            ip++;
            if (len < 7) {
                out[op++] = (unsigned char)((off >> 8) + (len << 5));
            } else {
                out[op++] = (unsigned char)((off >> 8) + (7 << 5));
                out[op++] = (unsigned char)(len - 7);
            }
            out[op++] = (unsigned char)off;
            lit = 0;
            op++; /* start a run */
            ip += len + 1;
            if (ip + 2 >= in_len) break;
            ip -= 2; /* VERY_FAST: hash the two positions before the new one */
            h = (uint32_t)in[ip] << 8 | in[ip + 1];
            h = lzf_next(h, in, ip);
            htab[lzf_idx(h)] = (uint32_t)(ip + 1);
            ip++;
            h = lzf_next(h, in, ip);
            htab[lzf_idx(h)] = (uint32_t)(ip + 1);
            ip++;
        } else {
            if (op >= out_len) goto done;
            lit++;
            out[op++] = in[ip++];
            if (lit == LZF_MAX_LIT) {
                out[op - lit - 1] = (unsigned char)(lit - 1);
                lit = 0;
                op++;
            }
        }
    }
    if (op + 3 > out_len) goto done;
    while (ip < in_len) {
        lit++;
        out[op++] = in[ip++];
        if (lit == LZF_MAX_LIT) {
            out[op - lit - 1] = (unsigned char)(lit - 1);
            lit = 0;
            op++;
        }
    }
    out[op - lit - 1] = (unsigned char)(lit - 1);
    op -= !lit;
    result = op;
done:
    fri_free(htab);
    return result;
}

size_t fri_lzf_decompress(const void *in_data, size_t in_len, void *out_data, size_t out_len)
{
    const unsigned char *in = in_data;
    unsigned char *out = out_data;
    size_t ip = 0, op = 0;
    while (ip < in_len) {
        unsigned ctrl = in[ip++];
        if (ctrl < 32) {
            size_t n = ctrl + 1;
            if (op + n > out_len) {
                errno = E2BIG;
                return 0;
            }
            if (ip + n > in_len) {
                errno = EINVAL;
                return 0;
            }
            memcpy(out + op, in + ip, n);
            op += n;
            ip += n;
        } else {
            size_t len = ctrl >> 5;
            if (ip >= in_len) {
                errno = EINVAL;
                return 0;
            }
            if (len == 7) {
                len += in[ip++];
                if (ip >= in_len) {
                    errno = EINVAL;
                    return 0;
                }
            }
            size_t back = ((size_t)(ctrl & 0x1f) << 8) + in[ip++] + 1;
            if (op + len + 2 > out_len) {
                errno = E2BIG;
                return 0;
            }
            if (back > op) {
                errno = EINVAL;
                return 0;
            }
            for (size_t k = 0; k < len + 2; k++, op++) out[op] = out[op - back];
        }
    }
    return op;
}

/* ----- Writing ---------------------------------------------------------------------------- */

#define RDB_ENC_INT8 0
#define RDB_ENC_INT16 1
#define RDB_ENC_INT32 2
#define RDB_ENC_LZF 3

static void put_byte(fri_buf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    fri_buf_append(b, &c, 1);
}

/* rdbSaveLen */
void fri_rdb_save_len(fri_buf *b, uint64_t len)
{
    unsigned char buf[9];
    if (len < (1 << 6)) {
        put_byte(b, (unsigned)len);
    } else if (len < (1 << 14)) {
        buf[0] = (unsigned char)((len >> 8) | 0x40);
        buf[1] = (unsigned char)len;
        fri_buf_append(b, buf, 2);
    } else if (len <= UINT32_MAX) {
        buf[0] = 0x80;
        for (int i = 0; i < 4; i++) buf[1 + i] = (unsigned char)(len >> (24 - 8 * i));
        fri_buf_append(b, buf, 5);
    } else {
        buf[0] = 0x81;
        for (int i = 0; i < 8; i++) buf[1 + i] = (unsigned char)(len >> (56 - 8 * i));
        fri_buf_append(b, buf, 9);
    }
}

static void save_len(fri_buf *b, uint64_t len) { fri_rdb_save_len(b, len); }

/* rdbEncodeInteger: the INT8/16/32 form of v, or 0 when it needs more than 32 bits. */
static size_t encode_int(long long v, unsigned char *enc)
{
    if (v >= -128 && v <= 127) {
        enc[0] = 0xC0 | RDB_ENC_INT8;
        enc[1] = (unsigned char)v;
        return 2;
    }
    if (v >= -32768 && v <= 32767) {
        enc[0] = 0xC0 | RDB_ENC_INT16;
        enc[1] = (unsigned char)v;
        enc[2] = (unsigned char)(v >> 8);
        return 3;
    }
    if (v >= -2147483648LL && v <= 2147483647LL) {
        enc[0] = 0xC0 | RDB_ENC_INT32;
        for (int i = 0; i < 4; i++) enc[1 + i] = (unsigned char)(v >> (8 * i));
        return 5;
    }
    return 0;
}

/* rdbSaveRawString: an integer form for short numbers, LZF when it saves 4 bytes or more
 * on a string over 20 bytes (rdbcompression yes), else the length and the bytes. */
int fri_rdb_save_string(fri_buf *b, const void *p, size_t len)
{
    unsigned char enc[5];
    long long v;
    if (len <= 11 && fri_string2ll(p, len, &v)) {
        size_t n = encode_int(v, enc);
        if (n) {
            fri_buf_append(b, enc, n);
            return 0;
        }
    }
    if (len > 20) {
        size_t outlen = len - 4;
        unsigned char *out = fri_malloc(outlen + 1);
        if (!out) return -1;
        size_t clen = fri_lzf_compress(p, len, out, outlen);
        if (clen) {
            put_byte(b, 0xC0 | RDB_ENC_LZF);
            save_len(b, clen);
            save_len(b, len);
            fri_buf_append(b, out, clen);
            fri_free(out);
            return 0;
        }
        fri_free(out);
    }
    save_len(b, len);
    fri_buf_append(b, p, len);
    return 0;
}

/* rdbSaveLongLongAsStringObject */
static void save_ll_string(fri_buf *b, long long v)
{
    unsigned char enc[5];
    size_t n = encode_int(v, enc);
    if (n) {
        fri_buf_append(b, enc, n);
        return;
    }
    char digits[32];
    size_t len = fri_ll2string(digits, sizeof(digits), v);
    save_len(b, len);
    fri_buf_append(b, digits, len);
}

static void put_le(fri_buf *b, uint64_t v, int bytes)
{
    unsigned char buf[8];
    for (int i = 0; i < bytes; i++) buf[i] = (unsigned char)(v >> (8 * i));
    fri_buf_append(b, buf, (size_t)bytes);
}

/* ----- Listpacks, built as Redis's listpack.c builds them -------------------------------- */

typedef struct lp_writer {
    fri_buf b;      /* header (6 bytes), entries; the end byte comes with lp_finish */
    uint64_t count; /* elements */
} lp_writer;

static void lp_begin(lp_writer *w)
{
    memset(w, 0, sizeof(*w));
    fri_buf_append(&w->b, "\0\0\0\0\0\0", 6);
}

/* The entry's encoding is followed by its "backlen": the encoding's size, 7 bits a byte,
 * most significant first, every byte but the first flagged with 128. */
static void lp_backlen(fri_buf *b, uint64_t l)
{
    unsigned char buf[5];
    int n = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    for (int i = 0; i < n; i++) {
        buf[i] = (unsigned char)((l >> (7 * (n - 1 - i))) & 127);
        if (i > 0) buf[i] |= 128;
    }
    fri_buf_append(b, buf, (size_t)n);
}

static void lp_int(lp_writer *w, int64_t v)
{
    unsigned char e[9];
    size_t n;
    uint64_t u = (uint64_t)v;
    if (v >= 0 && v <= 127) {
        e[0] = (unsigned char)v;
        n = 1;
    } else if (v >= -4096 && v <= 4095) {
        u = v < 0 ? (uint64_t)((1 << 13) + v) : u;
        e[0] = (unsigned char)((u >> 8) | 0xC0);
        e[1] = (unsigned char)u;
        n = 2;
    } else if (v >= -32768 && v <= 32767) {
        e[0] = 0xF1;
        for (int i = 0; i < 2; i++) e[1 + i] = (unsigned char)(u >> (8 * i));
        n = 3;
    } else if (v >= -8388608 && v <= 8388607) {
        e[0] = 0xF2;
        for (int i = 0; i < 3; i++) e[1 + i] = (unsigned char)(u >> (8 * i));
        n = 4;
    } else if (v >= -2147483648LL && v <= 2147483647LL) {
        e[0] = 0xF3;
        for (int i = 0; i < 4; i++) e[1 + i] = (unsigned char)(u >> (8 * i));
        n = 5;
    } else {
        e[0] = 0xF4;
        for (int i = 0; i < 8; i++) e[1 + i] = (unsigned char)(u >> (8 * i));
        n = 9;
    }
    fri_buf_append(&w->b, e, n);
    lp_backlen(&w->b, n);
    w->count++;
}

/* lpAppend: a string that reads as an integer (lpStringToInt64) is stored as one. */
static void lp_str(lp_writer *w, const char *p, size_t len)
{
    long long v;
    if (len > 0 && len <= 20 && fri_string2ll(p, len, &v)) {
        lp_int(w, v);
        return;
    }
    unsigned char hdr[5];
    size_t n;
    if (len < 64) {
        hdr[0] = (unsigned char)(len | 0x80);
        n = 1;
    } else if (len < 4096) {
        hdr[0] = (unsigned char)((len >> 8) | 0xE0);
        hdr[1] = (unsigned char)len;
        n = 2;
    } else {
        hdr[0] = 0xF0;
        for (int i = 0; i < 4; i++) hdr[1 + i] = (unsigned char)(len >> (8 * i));
        n = 5;
    }
    fri_buf_append(&w->b, hdr, n);
    fri_buf_append(&w->b, p, len);
    lp_backlen(&w->b, n + len);
    w->count++;
}

/* Closes the listpack: end byte, total bytes and element count (65535: "count them"). */
static void lp_finish(lp_writer *w)
{
    put_byte(&w->b, 0xFF);
    size_t total = w->b.len;
    unsigned count = w->count < 65535 ? (unsigned)w->count : 65535;
    for (int i = 0; i < 4; i++) w->b.p[i] = (char)(total >> (8 * i));
    w->b.p[4] = (char)(count & 0xff);
    w->b.p[5] = (char)(count >> 8);
}

/* ----- DUMP ---------------------------------------------------------------------------------- */

/* The quicklist nodes RPUSH of the elements makes (_quicklistNodeAllowInsert, the node's
 * listpack size plus the element's length plus 8 against list-max-listpack-size), each
 * saved as a packed node: container 2, the listpack as a string. */
static int dump_list(fri_buf *b, const fri_list *l, long long fill)
{
    static const size_t levels[] = {4096, 8192, 16384, 32768, 65536};
    size_t n = fri_list_len(l), nodes = 0;
    size_t *cuts = fri_malloc((n + 1) * sizeof(*cuts)); /* first element of each node */
    if (!cuts) return -1;
    size_t node_sz = 0, count = 0;
    for (size_t i = 0; i < n; i++) {
        const fri_str *e = fri_list_at(l, i);
        int fits = 0;
        if (count) {
            size_t new_sz = node_sz + e->len + 8;
            if (fill < 0 && (unsigned long long)(-fill) - 1 < 5)
                fits = new_sz <= levels[(unsigned long long)(-fill) - 1];
            else
                fits = new_sz <= 8192 && (long long)count < fill;
        }
        if (!fits) {
            cuts[nodes++] = i;
            node_sz = 7;
            count = 0;
        }
        node_sz += fri_lp_str_size(e->buf, e->len);
        count++;
    }
    cuts[nodes] = n;
    save_len(b, nodes);
    for (size_t k = 0; k < nodes; k++) {
        lp_writer w;
        lp_begin(&w);
        for (size_t i = cuts[k]; i < cuts[k + 1]; i++) {
            const fri_str *e = fri_list_at(l, i);
            lp_str(&w, e->buf, e->len);
        }
        lp_finish(&w);
        save_len(b, 2); /* QUICKLIST_NODE_CONTAINER_PACKED */
        int rc = fri_rdb_save_string(b, w.b.p, w.b.len);
        fri_buf_free(&w.b);
        if (rc < 0) {
            fri_free(cuts);
            return -1;
        }
    }
    fri_free(cuts);
    return 0;
}

static void collect_member(const char *p, size_t len, void *ctx)
{
    fri_buf *b = ctx;
    fri_rdb_save_string(b, p, len);
}

static void collect_int(const char *p, size_t len, void *ctx)
{
    long long v = 0;
    fri_string2ll(p, len, &v);
    fri_buf_append(ctx, &v, sizeof(v));
}

static int dump_set(fri_buf *b, fri_set *s)
{
    if (fri_set_is_intset(s)) {
        /* the intset blob: encoding (width), length, the members ascending, all LE */
        fri_buf ints = {0};
        fri_set_foreach(s, collect_int, &ints);
        size_t n = ints.len / sizeof(long long);
        unsigned width = fri_set_intset_width(s);
        fri_buf blob = {0};
        put_le(&blob, width, 4);
        put_le(&blob, n, 4);
        for (size_t i = 0; i < n; i++) {
            long long v;
            memcpy(&v, ints.p + i * sizeof(v), sizeof(v));
            put_le(&blob, (uint64_t)v, (int)width);
        }
        int rc = fri_rdb_save_string(b, blob.p, blob.len);
        fri_buf_free(&ints);
        fri_buf_free(&blob);
        return rc;
    }
    save_len(b, fri_set_size(s));
    fri_set_foreach(s, collect_member, b);
    return 0;
}

static int dump_hash(fri_buf *b, fri_hash *h)
{
    fri_dict *d = fri_hash_fields(h);
    size_t slots = fri_dict_slots(d);
    if (fri_hash_is_listpack(h)) {
        lp_writer w;
        lp_begin(&w);
        for (size_t i = 0; i < slots; i++) {
            fri_dent *e = fri_dict_slot(d, i);
            if (!e) continue;
            const fri_str *v = e->v.ptr;
            lp_str(&w, e->key->buf, e->key->len);
            lp_str(&w, v->buf, v->len);
        }
        lp_finish(&w);
        int rc = fri_rdb_save_string(b, w.b.p, w.b.len);
        fri_buf_free(&w.b);
        return rc;
    }
    save_len(b, fri_dict_size(d));
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (!e) continue;
        const fri_str *v = e->v.ptr;
        if (fri_rdb_save_string(b, e->key->buf, e->key->len) < 0 || fri_rdb_save_string(b, v->buf, v->len) < 0)
            return -1;
    }
    return 0;
}

/* Redis's double2ll: a double that is an integer in (-2^62, 2^62) reads as a long long. */
static int double2ll(double d, long long *out)
{
    if (d < (double)(-LLONG_MAX / 2) || d > (double)(LLONG_MAX / 2)) return 0;
    long long ll = (long long)d;
    if ((double)ll != d) return 0;
    *out = ll;
    return 1;
}

typedef struct zset_items {
    fri_buf refs; /* zset_item[] */
} zset_items;

typedef struct zset_item {
    const char *p;
    size_t len;
    double score;
} zset_item;

static void collect_zitem(const char *p, size_t len, double score, void *ctx)
{
    zset_item it = {p, len, score};
    fri_buf_append(ctx, &it, sizeof(it));
}

static int dump_zset(fri_buf *b, fri_zset *z)
{
    fri_buf items = {0};
    fri_zset_foreach(z, collect_zitem, &items);
    size_t n = items.len / sizeof(zset_item);
    zset_item *v = (zset_item *)(void *)items.p;
    int rc = 0;
    if (fri_zset_is_listpack(z)) {
        /* zzlInsertAt: the member, then the score as an integer when it is one, else as
         * d2string writes it ("%.17g", inf, -inf) */
        lp_writer w;
        lp_begin(&w);
        for (size_t i = 0; i < n; i++) {
            long long ll;
            lp_str(&w, v[i].p, v[i].len);
            if (double2ll(v[i].score, &ll)) {
                lp_int(&w, ll);
            } else {
                char buf[64];
                size_t len = fri_d2string(buf, sizeof(buf), v[i].score);
                lp_str(&w, buf, len);
            }
        }
        lp_finish(&w);
        rc = fri_rdb_save_string(b, w.b.p, w.b.len);
        fri_buf_free(&w.b);
    } else {
        /* the skiplist from its tail: members by descending rank, binary doubles */
        save_len(b, n);
        for (size_t i = n; i-- > 0 && rc == 0;) {
            rc = fri_rdb_save_string(b, v[i].p, v[i].len);
            uint64_t bits;
            memcpy(&bits, &v[i].score, sizeof(bits));
            put_le(b, bits, 8);
        }
    }
    fri_buf_free(&items);
    return rc;
}

/* The stream node's listpack, as streamAppendItem built it: the master entry (count,
 * deleted, the field names, 0), then each entry: flags, ms and seq relative to the master
 * id, the field count and names unless SAMEFIELDS, the values, and lp-count. */
typedef struct node_dump {
    lp_writer w;
    fri_sid master;
} node_dump;

static void nd_master(void *ctx, fri_sid master, unsigned live, unsigned deleted, long nfields,
                      const fri_arg *fields)
{
    node_dump *d = ctx;
    d->master = master;
    lp_int(&d->w, live);
    lp_int(&d->w, deleted);
    lp_int(&d->w, nfields);
    for (long k = 0; k < nfields; k++) lp_str(&d->w, fields[k].ptr, fields[k].len);
    lp_int(&d->w, 0);
}

static void nd_entry(void *ctx, int flags, fri_sid id, long nfields, const fri_arg *fv)
{
    node_dump *d = ctx;
    int same = (flags & FRI_STREAM_ENTRY_SAMEFIELDS) != 0;
    lp_int(&d->w, flags);
    lp_int(&d->w, (int64_t)(id.ms - d->master.ms));
    lp_int(&d->w, (int64_t)(id.seq - d->master.seq));
    if (!same) lp_int(&d->w, nfields);
    for (long k = 0; k < nfields; k++) {
        if (!same) lp_str(&d->w, fv[2 * k].ptr, fv[2 * k].len);
        lp_str(&d->w, fv[2 * k + 1].ptr, fv[2 * k + 1].len);
    }
    lp_int(&d->w, same ? nfields + 3 : 2 * nfields + 4);
}

static void put_sid_raw(fri_buf *b, fri_sid id)
{
    unsigned char raw[16];
    for (int i = 0; i < 8; i++) {
        raw[i] = (unsigned char)(id.ms >> (56 - 8 * i));
        raw[8 + i] = (unsigned char)(id.seq >> (56 - 8 * i));
    }
    fri_buf_append(b, raw, 16);
}

static int cmp_dent_name(const void *a, const void *b)
{
    const fri_dent *x = *(const fri_dent *const *)a, *y = *(const fri_dent *const *)b;
    return fri_bytes_cmp(x->key->buf, x->key->len, y->key->buf, y->key->len);
}

/* A dict's live entries sorted by key bytes (the order of Redis's radix trees). */
static fri_dent **sorted_entries(fri_dict *d, size_t *n)
{
    size_t slots = fri_dict_slots(d), k = 0;
    fri_dent **v = fri_malloc((fri_dict_size(d) + 1) * sizeof(*v));
    if (!v) return NULL;
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e) v[k++] = e;
    }
    qsort(v, k, sizeof(*v), cmp_dent_name);
    *n = k;
    return v;
}

static int dump_stream(fri_buf *b, fri_stream *s)
{
    static const fri_stream_node_visitor visitor = {nd_master, nd_entry};
    size_t nodes = fri_stream_node_count(s);
    save_len(b, nodes);
    for (size_t i = 0; i < nodes; i++) {
        node_dump d;
        lp_begin(&d.w);
        if (fri_stream_node_walk(s, i, &visitor, &d) < 0) {
            fri_buf_free(&d.w.b);
            return -1;
        }
        lp_finish(&d.w);
        fri_buf key = {0};
        put_sid_raw(&key, fri_stream_node_key(s, i));
        fri_rdb_save_string(b, key.p, key.len);
        fri_buf_free(&key);
        int rc = fri_rdb_save_string(b, d.w.b.p, d.w.b.len);
        fri_buf_free(&d.w.b);
        if (rc < 0) return -1;
    }
    save_len(b, s->length);
    save_len(b, s->last_id.ms);
    save_len(b, s->last_id.seq);
    save_len(b, s->first_id.ms);
    save_len(b, s->first_id.seq);
    save_len(b, s->max_deleted_entry_id.ms);
    save_len(b, s->max_deleted_entry_id.seq);
    save_len(b, s->entries_added);
    size_t ngroups = 0;
    fri_dent **groups = NULL;
    if (s->cgroups && fri_dict_size(s->cgroups)) {
        if (!(groups = sorted_entries(s->cgroups, &ngroups))) return -1;
    }
    save_len(b, ngroups);
    for (size_t g = 0; g < ngroups; g++) {
        fri_stream_cg *cg = groups[g]->v.ptr;
        fri_rdb_save_string(b, groups[g]->key->buf, groups[g]->key->len);
        save_len(b, cg->last_id.ms);
        save_len(b, cg->last_id.seq);
        save_len(b, (uint64_t)cg->entries_read);
        save_len(b, fri_sidmap_len(cg->pel));
        fri_sidmap_iter it;
        fri_sid id;
        void *val;
        fri_sidmap_iter_init(&it, cg->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
        while (fri_sidmap_iter_next(&it, &id, &val)) {
            const fri_stream_nack *nack = val;
            put_sid_raw(b, id);
            put_le(b, (uint64_t)nack->delivery_time, 8);
            save_len(b, nack->delivery_count);
        }
        size_t ncons = 0;
        fri_dent **cons = sorted_entries(cg->consumers, &ncons);
        if (!cons) {
            fri_free(groups);
            return -1;
        }
        save_len(b, ncons);
        for (size_t k = 0; k < ncons; k++) {
            const fri_stream_consumer *consumer = cons[k]->v.ptr;
            fri_rdb_save_string(b, cons[k]->key->buf, cons[k]->key->len);
            put_le(b, (uint64_t)consumer->seen_time, 8);
            save_len(b, fri_sidmap_len(consumer->pel));
            fri_sidmap_iter_init(&it, consumer->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
            while (fri_sidmap_iter_next(&it, &id, NULL)) put_sid_raw(b, id);
        }
        fri_free(cons);
    }
    fri_free(groups);
    return 0;
}

/* rdbSaveObjectType: the RDB type 7.0 writes for the value's encoding. */
static int value_type(const fri_obj *o)
{
    switch ((fri_type)o->type) {
    case FRI_STRING: return FRI_RDB_TYPE_STRING;
    case FRI_LIST: return FRI_RDB_TYPE_LIST_QUICKLIST_2;
    case FRI_SET: return fri_set_is_intset(o->ptr) ? FRI_RDB_TYPE_SET_INTSET : FRI_RDB_TYPE_SET;
    case FRI_HASH:
        return fri_hash_is_listpack(o->ptr) ? FRI_RDB_TYPE_HASH_LISTPACK : FRI_RDB_TYPE_HASH;
    case FRI_ZSET:
        return fri_zset_is_listpack(o->ptr) ? FRI_RDB_TYPE_ZSET_LISTPACK : FRI_RDB_TYPE_ZSET_2;
    case FRI_STREAM: return FRI_RDB_TYPE_STREAM_LISTPACKS_2;
    }
    return -1;
}

int fri_rdb_save_value(fr_server *s, const fri_obj *o, const char *key, size_t key_len,
                       fri_buf *out)
{
    size_t start = out->len;
    int rc = 0;
    put_byte(out, (unsigned)value_type(o));
    if (key) rc = fri_rdb_save_string(out, key, key_len);
    switch ((fri_type)o->type) {
    case FRI_STRING: {
        const fri_str *str = o->ptr;
        long long v;
        if (o->strenc == FRI_STRENC_INT && fri_string2ll(str->buf, str->len, &v))
            save_ll_string(out, v);
        else
            rc = rc < 0 ? rc : fri_rdb_save_string(out, str->buf, str->len);
        break;
    }
    case FRI_LIST: rc = rc < 0 ? rc : dump_list(out, o->ptr, s->tun.list_max_listpack_size); break;
    case FRI_SET: rc = rc < 0 ? rc : dump_set(out, o->ptr); break;
    case FRI_HASH: rc = rc < 0 ? rc : dump_hash(out, o->ptr); break;
    case FRI_ZSET: rc = rc < 0 ? rc : dump_zset(out, o->ptr); break;
    case FRI_STREAM: rc = rc < 0 ? rc : dump_stream(out, o->ptr); break;
    }
    if (rc < 0) {
        out->len = start;
        return -1;
    }
    return 0;
}

int fri_rdb_dump(fr_server *s, const fri_obj *o, fri_buf *out)
{
    size_t start = out->len;
    if (fri_rdb_save_value(s, o, NULL, 0, out) < 0) return -1;
    put_le(out, FRI_RDB_VERSION, 2);
    put_le(out, fri_crc64(0, out->p + start, out->len - start), 8);
    return 0;
}

int fri_rdb_verify(const unsigned char *p, size_t len)
{
    if (len < 10) return -1;
    const unsigned char *footer = p + len - 10;
    unsigned version = (unsigned)footer[0] | (unsigned)footer[1] << 8;
    if (version > FRI_RDB_VERSION) return -1;
    uint64_t crc = fri_crc64(0, p, len - 8), stored = 0;
    for (int i = 0; i < 8; i++) stored |= (uint64_t)footer[2 + i] << (8 * i);
    return crc == stored ? 0 : -1;
}

/* ----- Reading ------------------------------------------------------------------------------ */

typedef fri_rdb_reader reader;

static int rd_bytes(reader *r, void *dst, size_t n)
{
    if (r->err || r->len - r->pos < n) {
        if (!r->err) r->short_read = 1;
        r->err = 1;
        return -1;
    }
    if (dst) memcpy(dst, r->p + r->pos, n);
    r->pos += n;
    return 0;
}

/* rdbLoadLen: the length, or with *encoded set the RDB_ENC_* number of a special
 * string form.  UINT64_MAX with r->err set on error. */
static uint64_t rd_len(reader *r, int *encoded)
{
    unsigned char b[8];
    if (encoded) *encoded = 0;
    if (rd_bytes(r, b, 1) < 0) return UINT64_MAX;
    int type = (b[0] & 0xC0) >> 6;
    if (type == 3) {
        if (!encoded) {
            r->err = 1;
            return UINT64_MAX;
        }
        *encoded = 1;
        return b[0] & 0x3F;
    }
    if (type == 0) return b[0] & 0x3F;
    if (type == 1) {
        unsigned hi = b[0] & 0x3F;
        if (rd_bytes(r, b, 1) < 0) return UINT64_MAX;
        return (uint64_t)hi << 8 | b[0];
    }
    int n = b[0] == 0x80 ? 4 : b[0] == 0x81 ? 8 : 0;
    if (!n || rd_bytes(r, b, (size_t)n) < 0) {
        r->err = 1;
        return UINT64_MAX;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | b[i];
    return v;
}

/* A length that must also be a count of things still to read (each at least min_bytes
 * long), so that a corrupt count cannot make the reader allocate for nothing. */
static uint64_t rd_count(reader *r, size_t min_bytes)
{
    uint64_t n = rd_len(r, NULL);
    if (!r->err && min_bytes && n > (r->len - r->pos) / min_bytes) {
        r->err = 1; /* Redis would read on to the end of the file */
        r->short_read = 1;
    }
    return r->err ? 0 : n;
}

/* rdbGenericLoadStringObject: a new string (integer forms as their digits), or NULL. */
static fri_str *rd_string(reader *r)
{
    int encoded;
    uint64_t len = rd_len(r, &encoded);
    if (r->err) return NULL;
    if (encoded) {
        unsigned char b[4];
        long long v;
        switch (len) {
        case RDB_ENC_INT8:
            if (rd_bytes(r, b, 1) < 0) return NULL;
            v = (signed char)b[0];
            return fri_str_from_ll(v);
        case RDB_ENC_INT16:
            if (rd_bytes(r, b, 2) < 0) return NULL;
            v = (int16_t)(b[0] | b[1] << 8);
            return fri_str_from_ll(v);
        case RDB_ENC_INT32:
            if (rd_bytes(r, b, 4) < 0) return NULL;
            v = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                          (uint32_t)b[3] << 24);
            return fri_str_from_ll(v);
        case RDB_ENC_LZF: {
            uint64_t clen = rd_len(r, NULL), olen = rd_len(r, NULL);
            if (r->err || clen > r->len - r->pos || olen > clen * 300 + 64) {
                if (!r->err && clen > r->len - r->pos) r->short_read = 1;
                else if (!r->err) r->why = "Invalid LZF compressed string";
                r->err = 1;
                return NULL;
            }
            char *tmp = fri_malloc((size_t)olen + 1);
            fri_str *s = NULL;
            errno = 0;
            size_t got = tmp ? fri_lzf_decompress(r->p + r->pos, (size_t)clen, tmp, (size_t)olen) : 0;
            if (tmp && got == 0 && olen > 0 && errno) r->lzf_errno = errno;
            if (tmp && got == olen) s = fri_str_new(tmp, (size_t)olen);
            fri_free(tmp);
            if (!s) {
                r->why = "Invalid LZF compressed string";
                r->err = 1;
                return NULL;
            }
            r->pos += clen;
            return s;
        }
        default:
            r->why = "Unknown RDB string encoding type %llu";
            r->why_arg = len;
            r->err = 1;
            return NULL;
        }
    }
    if (len > r->len - r->pos) {
        r->short_read = 1;
        r->err = 1;
        return NULL;
    }
    fri_str *s = fri_str_new((const char *)r->p + r->pos, (size_t)len);
    if (!s) r->err = 1;
    else r->pos += len;
    return s;
}

/* ----- Listpack reading -------------------------------------------------------------------- */

/* One listpack element: a string (p, len), or an integer (is_int, v) whose digits are
 * also in buf so that it can be used as a string. */
typedef struct lp_elem {
    const char *p;
    size_t len;
    int is_int;
    long long v;
    char buf[24];
} lp_elem;

typedef struct lp_reader {
    const unsigned char *lp;
    size_t size, pos;
    uint64_t seen;
} lp_reader;

/* lpValidateIntegrity's header checks (size, end byte), then every entry is checked as
 * it is read.  0, or -1. */
static int lp_open(lp_reader *lr, const fri_str *s)
{
    const unsigned char *lp = (const unsigned char *)s->buf;
    if (s->len < 7) return -1;
    uint32_t total = (uint32_t)lp[0] | (uint32_t)lp[1] << 8 | (uint32_t)lp[2] << 16 |
                     (uint32_t)lp[3] << 24;
    if (total != s->len || lp[s->len - 1] != 0xFF) return -1;
    lr->lp = lp;
    lr->size = s->len;
    lr->pos = 6;
    lr->seen = 0;
    return 0;
}

static unsigned lp_header_count(const lp_reader *lr) { return lr->lp[4] | lr->lp[5] << 8; }

/* The next element: 1, 0 at the end (the count in the header then checked), -1 when
 * malformed. */
static int lp_next(lp_reader *lr, lp_elem *e)
{
    const unsigned char *p = lr->lp + lr->pos;
    size_t avail = lr->size - 1 - lr->pos; /* bytes before the end byte */
    if (avail == 0) {
        unsigned hc = lp_header_count(lr);
        return hc == 65535 || hc == lr->seen ? 0 : -1;
    }
    size_t enc, datalen = 0;
    uint64_t u = 0;
    int nbytes = 0;
    e->is_int = 1;
    unsigned char b = p[0];
    if ((b & 0x80) == 0) {
        enc = 1;
        e->v = b & 0x7f;
    } else if ((b & 0xC0) == 0x80) {
        datalen = b & 0x3F;
        enc = 1 + datalen;
        e->is_int = 0;
    } else if ((b & 0xE0) == 0xC0) {
        if (avail < 2) return -1;
        u = (uint64_t)(b & 0x1F) << 8 | p[1];
        e->v = u >= 4096 ? (long long)u - 8192 : (long long)u;
        enc = 2;
    } else if ((b & 0xF0) == 0xE0) {
        if (avail < 2) return -1;
        datalen = (size_t)(b & 0xF) << 8 | p[1];
        enc = 2 + datalen;
        e->is_int = 0;
    } else if (b == 0xF0) {
        if (avail < 5) return -1;
        datalen = (size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 | (size_t)p[4] << 24;
        enc = 5 + datalen;
        e->is_int = 0;
    } else if (b >= 0xF1 && b <= 0xF4) {
        nbytes = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
        enc = 1 + (size_t)nbytes;
        if (avail < enc) return -1;
        for (int i = 0; i < nbytes; i++) u |= (uint64_t)p[1 + i] << (8 * i);
        if (nbytes < 8 && (u >> (8 * nbytes - 1)) & 1) u |= ~0ULL << (8 * nbytes);
        e->v = (long long)u;
    } else {
        return -1;
    }
    if (enc > avail) return -1;
    size_t bl = enc <= 127 ? 1 : enc < 16383 ? 2 : enc < 2097151 ? 3 : enc < 268435455 ? 4 : 5;
    if (enc + bl > avail) return -1;
    /* the back-length must say the encoding's size, written as lpEncodeBacklen writes it:
     * 7 bits a byte, the first without the high bit, the others with it (Redis reads it
     * backwards, stopping at the byte without it: any other bytes mean another length) */
    for (size_t i = 0; i < bl; i++) {
        unsigned want = (unsigned)(enc >> (7 * (bl - 1 - i))) & 127;
        if (i > 0) want |= 128;
        if (p[enc + i] != want) return -1;
    }
    if (e->is_int) {
        e->len = fri_ll2string(e->buf, sizeof(e->buf), e->v);
        e->p = e->buf;
    } else {
        e->p = (const char *)p + (enc - datalen);
        e->len = datalen;
    }
    lr->pos += enc + bl;
    lr->seen++;
    return 1;
}

/* The next element, which must exist: 0, or -1. */
static int lp_must(lp_reader *lr, lp_elem *e) { return lp_next(lr, e) == 1 ? 0 : -1; }

/* The next element as an integer (a string holding one counts, as lpGetInteger reads). */
static int lp_must_int(lp_reader *lr, long long *v)
{
    lp_elem e;
    if (lp_must(lr, &e) < 0) return -1;
    if (e.is_int) {
        *v = e.v;
        return 0;
    }
    return fri_string2ll(e.p, e.len, v) ? 0 : -1;
}

/* ----- Ziplists (payloads of Redis 6 and older) ---------------------------------------------- */

/* Decodes a ziplist: header (total bytes, tail offset, count, little-endian), entries
 * (the previous entry's length in 1 or 5 bytes, an encoding, the data), 0xFF.  Appends
 * each element to out as a new fri_str* (integers as their digits).  0, or -1 when
 * malformed. */
static int zl_elements(const fri_str *data, fri_buf *out)
{
    const unsigned char *p = (const unsigned char *)data->buf;
    size_t len = data->len;
    if (len < 11 || p[len - 1] != 0xFF) return -1;
    uint32_t total = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
    uint32_t tail = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                    (uint32_t)p[7] << 24;
    unsigned count = p[8] | p[9] << 8, seen = 0;
    if (total != len) return -1;
    size_t pos = 10, end = len - 1, last = 10, prev_len = 0;
    while (pos < end) {
        last = pos; /* the tail offset must name the last entry */
        size_t prev = p[pos] < 254 ? 1 : p[pos] == 254 ? 5 : 0;
        if (!prev || pos + prev >= end) return -1;
        size_t said = prev == 1 ? p[pos]
                                : (size_t)p[pos + 1] | (size_t)p[pos + 2] << 8 |
                                      (size_t)p[pos + 3] << 16 | (size_t)p[pos + 4] << 24;
        if (said != prev_len) return -1; /* each entry records its predecessor's size */
        pos += prev;
        unsigned enc = p[pos];
        size_t hdr, slen = 0;
        long long v = 0;
        int is_int = 0;
        if (enc >> 6 == 0) {
            hdr = 1;
            slen = enc & 0x3f;
        } else if (enc >> 6 == 1) {
            hdr = 2;
            if (pos + 1 >= end) return -1;
            slen = (size_t)(enc & 0x3f) << 8 | p[pos + 1];
        } else if (enc == 0x80) {
            hdr = 5;
            if (pos + 4 >= end) return -1;
            slen = (size_t)p[pos + 1] << 24 | (size_t)p[pos + 2] << 16 | (size_t)p[pos + 3] << 8 |
                   p[pos + 4];
        } else if (enc >= 0xF1 && enc <= 0xFD) { /* a 4-bit immediate, 0 to 12 */
            hdr = 1;
            is_int = 1;
            v = (long long)(enc & 0x0f) - 1;
        } else {
            int n = enc == 0xC0 ? 2 : enc == 0xD0 ? 4 : enc == 0xE0 ? 8 : enc == 0xF0 ? 3
                    : enc == 0xFE ? 1 : 0;
            if (!n || pos + (size_t)n >= end) return -1;
            uint64_t u = 0;
            for (int i = 0; i < n; i++) u |= (uint64_t)p[pos + 1 + i] << (8 * i);
            if (n < 8 && (u >> (8 * n - 1)) & 1) u |= ~0ULL << (8 * n);
            hdr = 1 + (size_t)n;
            is_int = 1;
            v = (long long)u;
        }
        if (!is_int && (slen > end - pos || hdr + slen > end - pos)) return -1;
        if (is_int && hdr > end - pos) return -1;
        fri_str *e = is_int ? fri_str_from_ll(v) : fri_str_new((const char *)p + pos + hdr, slen);
        if (!e) return -1;
        fri_buf_append(out, &e, sizeof(e));
        pos += hdr + (is_int ? 0 : slen);
        prev_len = pos - last;
        seen++;
    }
    return pos == end && tail == last && (count == 65535 || count == seen) ? 0 : -1;
}

/* The elements of a listpack (ziplist = 0) or a ziplist, appended to out as fri_str*:
 * 0, or -1 when malformed. */
static int blob_elements(const fri_str *data, int ziplist, fri_buf *out)
{
    if (ziplist) return zl_elements(data, out);
    lp_reader lr;
    lp_elem e;
    int rc = -1;
    if (lp_open(&lr, data) == 0) {
        while ((rc = lp_next(&lr, &e)) == 1) {
            fri_str *item = fri_str_new(e.p, e.len);
            if (!item) return -1;
            fri_buf_append(out, &item, sizeof(item));
        }
    }
    return rc;
}

static void free_items(fri_buf *items)
{
    size_t n = items->len / sizeof(fri_str *);
    fri_str **v = (fri_str **)(void *)items->p;
    for (size_t i = 0; i < n; i++) fri_str_free(v[i]);
    fri_buf_free(items);
}

/* ----- Loading each type ----------------------------------------------------------------- */

/* rdbLoadDoubleValue (RDB_TYPE_ZSET): a length byte (253 nan, 254 inf, 255 -inf) and that
 * many ASCII bytes. */
static int rd_ascii_double(reader *r, double *d)
{
    unsigned char len;
    char buf[256];
    if (rd_bytes(r, &len, 1) < 0) return -1;
    if (len == 253) *d = NAN;
    else if (len == 254) *d = INFINITY;
    else if (len == 255) *d = -INFINITY;
    else {
        if (rd_bytes(r, buf, len) < 0) return -1;
        buf[len] = 0;
        if (sscanf(buf, "%lg", d) != 1) return -1;
    }
    return 0;
}

static fri_obj *load_list(fr_server *s, reader *r, int type)
{
    (void)s;
    fri_buf items = {0}; /* fri_str* */
    int bad = 0;
    uint64_t nodes = 1; /* RDB_TYPE_LIST_ZIPLIST: one ziplist */
    if (type != FRI_RDB_TYPE_LIST_ZIPLIST) {
        nodes = rd_count(r, 1);
        if (!r->err && nodes == 0) r->empty = 1; /* RDB_LOAD_ERR_EMPTY_KEY */
        if (r->err || nodes == 0) return NULL;
    }
    for (uint64_t k = 0; k < nodes && !bad; k++) {
        if (type == FRI_RDB_TYPE_LIST_ZIPLIST || type == FRI_RDB_TYPE_LIST_QUICKLIST) {
            /* ziplists: no container; an empty one is skipped */
            fri_str *data = rd_string(r);
            if (!data || data->len == 0 || zl_elements(data, &items) < 0) bad = 1;
            fri_str_free(data);
            continue;
        }
        if (type == FRI_RDB_TYPE_LIST) {
            fri_str *e = rd_string(r);
            if (!e) bad = 1;
            else fri_buf_append(&items, &e, sizeof(e));
            continue;
        }
        uint64_t container = rd_len(r, NULL);
        if (r->err || (container != 1 && container != 2)) {
            bad = 1;
            break;
        }
        fri_str *data = rd_string(r);
        if (!data || data->len == 0) {
            fri_str_free(data);
            bad = 1;
            break;
        }
        if (container == 1) { /* a plain node: one element */
            fri_buf_append(&items, &data, sizeof(data));
            continue;
        }
        if (blob_elements(data, 0, &items) < 0) bad = 1;
        fri_str_free(data);
    }
    size_t n = items.len / sizeof(fri_str *);
    fri_str **v = (fri_str **)(void *)items.p;
    fri_list *l = NULL;
    if (!bad && n > 0) l = fri_list_from_array(v, n);
    if (!bad && n == 0) r->empty = 1; /* only empty nodes */
    if (!l) {
        for (size_t i = 0; i < n; i++) fri_str_free(v[i]);
        fri_buf_free(&items);
        return NULL;
    }
    fri_buf_free(&items);
    fri_obj *o = fri_obj_new(FRI_LIST, l);
    if (!o) fri_list_free(l);
    return o;
}

static fri_obj *load_set(fr_server *s, reader *r, int type)
{
    fri_set *set = NULL;
    if (type == FRI_RDB_TYPE_SET_INTSET) {
        fri_str *blob = rd_string(r);
        if (!blob) return NULL;
        const unsigned char *b = (const unsigned char *)blob->buf;
        uint32_t width = 0, n = 0;
        if (blob->len >= 8) {
            width = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                    (uint32_t)b[3] << 24;
            n = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 |
                (uint32_t)b[7] << 24;
        }
        if ((width != 2 && width != 4 && width != 8) || n == 0 ||
            blob->len != 8 + (uint64_t)n * width || !(set = fri_set_restore_new(1, width))) {
            fri_str_free(blob);
            return NULL;
        }
        long long prev = 0;
        for (uint32_t i = 0; i < n && set; i++) {
            uint64_t u = 0;
            for (uint32_t k = 0; k < width; k++) u |= (uint64_t)b[8 + i * width + k] << (8 * k);
            if (width < 8 && (u >> (8 * width - 1)) & 1) u |= ~0ULL << (8 * width);
            char digits[24];
            size_t len = fri_ll2string(digits, sizeof(digits), (long long)u);
            /* members strictly ascending, as intsetValidateIntegrity wants them (Redis
             * refuses anything else when it sanitizes; its binary searches need it) */
            if ((i > 0 && (long long)u <= prev) || fri_set_restore_add(set, digits, len) != 1) {
                fri_set_free(set);
                set = NULL;
            }
            prev = (long long)u;
        }
        fri_str_free(blob);
        if (set && (long long)n > s->tun.set_max_intset_entries &&
            fri_set_restore_convert(set) < 0) {
            fri_set_free(set);
            set = NULL;
        }
    } else {
        uint64_t n = rd_count(r, 1);
        if (!r->err && n == 0) r->empty = 1;
        if (r->err || n == 0) return NULL;
        long long max = s->tun.set_max_intset_entries;
        if (max >= 1 << 30) max = 1 << 30;
        set = fri_set_restore_new((long long)n <= max, 0);
        for (uint64_t i = 0; i < n && set; i++) {
            fri_str *m = rd_string(r);
            if (!m || fri_set_restore_add(set, m->buf, m->len) != 1) {
                fri_set_free(set);
                set = NULL;
            }
            fri_str_free(m);
        }
    }
    if (!set) return NULL;
    fri_obj *o = fri_obj_new(FRI_SET, set);
    if (!o) fri_set_free(set);
    return o;
}

/* Pairs read from a payload before the encoding is decided. */
typedef struct pair {
    fri_str *a;
    fri_str *b;   /* hashes: the value */
    double score; /* sorted sets */
} pair;

static void free_pairs(fri_buf *pairs)
{
    size_t n = pairs->len / sizeof(pair);
    pair *v = (pair *)(void *)pairs->p;
    for (size_t i = 0; i < n; i++) {
        fri_str_free(v[i].a);
        fri_str_free(v[i].b);
    }
    fri_buf_free(pairs);
}

/* Reads a listpack (or, when ziplist, a ziplist) of (a, b) pairs into pairs (b as a
 * string for hashes, as a score for sorted sets, read as zzlGetScore reads it): 0, or -1. */
static int read_blob_pairs(reader *r, fri_buf *pairs, int zset, int ziplist)
{
    fri_str *data = rd_string(r);
    if (!data) return -1;
    fri_buf items = {0};
    int rc = blob_elements(data, ziplist, &items);
    fri_str_free(data);
    size_t n = items.len / sizeof(fri_str *);
    fri_str **v = (fri_str **)(void *)items.p;
    if (rc == 0 && n % 2) rc = -1;
    for (size_t i = 0; rc == 0 && i < n; i += 2) {
        pair p = {v[i], NULL, 0};
        v[i] = NULL;
        if (zset) {
            char buf[128];
            size_t len = v[i + 1]->len < sizeof(buf) - 1 ? v[i + 1]->len : sizeof(buf) - 1;
            memcpy(buf, v[i + 1]->buf, len);
            buf[len] = 0;
            p.score = strtod(buf, NULL);
            if (isnan(p.score)) rc = -1;
        } else {
            p.b = v[i + 1];
            v[i + 1] = NULL;
        }
        fri_buf_append(pairs, &p, sizeof(p));
    }
    free_items(&items);
    return rc;
}

static fri_obj *load_hash(fr_server *s, reader *r, int type)
{
    fri_buf pairs = {0};
    int listpack;
    if (type == FRI_RDB_TYPE_HASH_LISTPACK || type == FRI_RDB_TYPE_HASH_ZIPLIST) {
        if (read_blob_pairs(r, &pairs, 0, type == FRI_RDB_TYPE_HASH_ZIPLIST) < 0) goto bad;
        listpack = (long long)(pairs.len / sizeof(pair)) <= s->tun.hash_max_listpack_entries;
    } else {
        uint64_t n = rd_count(r, 2);
        if (r->err) goto bad;
        listpack = (long long)n <= s->tun.hash_max_listpack_entries;
        for (uint64_t i = 0; i < n; i++) {
            pair p = {rd_string(r), NULL, 0};
            if (p.a) p.b = rd_string(r);
            fri_buf_append(&pairs, &p, sizeof(p));
            if (!p.a || !p.b) goto bad;
            if ((long long)p.a->len > s->tun.hash_max_listpack_value ||
                (long long)p.b->len > s->tun.hash_max_listpack_value)
                listpack = 0;
        }
    }
    size_t n = pairs.len / sizeof(pair);
    if (n == 0) {
        r->empty = !r->err;
        goto bad;
    }
    pair *v = (pair *)(void *)pairs.p;
    fri_hash *h = fri_hash_restore_new(listpack);
    if (!h) goto bad;
    fri_dict *d = fri_hash_fields(h);
    for (size_t i = 0; i < n; i++) {
        int created;
        fri_dent *e = fri_dict_add(d, v[i].a->buf, v[i].a->len, &created);
        if (!e || !created) {
            fri_hash_free(h);
            goto bad;
        }
        e->v.ptr = v[i].b;
        v[i].b = NULL;
    }
    free_pairs(&pairs);
    fri_obj *o = fri_obj_new(FRI_HASH, h);
    if (!o) fri_hash_free(h);
    return o;
bad:
    free_pairs(&pairs);
    return NULL;
}

/* Whether sorted-set pair a comes strictly before b in a listpack: by score, then by
 * member bytes (a shorter prefix first), zsetCompare's order. */
static int zset_pair_before(const pair *a, const pair *b)
{
    if (a->score != b->score) return a->score < b->score;
    size_t n = a->a->len < b->a->len ? a->a->len : b->a->len;
    int c = memcmp(a->a->buf, b->a->buf, n);
    return c < 0 || (c == 0 && a->a->len < b->a->len);
}

static fri_obj *load_zset(fr_server *s, reader *r, int type)
{
    fri_buf pairs = {0};
    int listpack;
    if (type == FRI_RDB_TYPE_ZSET_LISTPACK || type == FRI_RDB_TYPE_ZSET_ZIPLIST) {
        if (read_blob_pairs(r, &pairs, 1, type == FRI_RDB_TYPE_ZSET_ZIPLIST) < 0) goto bad;
        listpack = (long long)(pairs.len / sizeof(pair)) <= s->tun.zset_max_listpack_entries;
    } else {
        uint64_t n = rd_count(r, 2);
        if (r->err) goto bad;
        size_t maxlen = 0;
        for (uint64_t i = 0; i < n; i++) {
            pair p = {rd_string(r), NULL, 0};
            fri_buf_append(&pairs, &p, sizeof(p));
            if (!p.a) goto bad;
            if (type == FRI_RDB_TYPE_ZSET_2) {
                unsigned char raw[8];
                uint64_t bits = 0;
                if (rd_bytes(r, raw, 8) < 0) goto bad;
                for (int k = 0; k < 8; k++) bits |= (uint64_t)raw[k] << (8 * k);
                memcpy(&p.score, &bits, sizeof(bits));
            } else if (rd_ascii_double(r, &p.score) < 0) {
                goto bad;
            }
            if (isnan(p.score)) goto bad;
            ((pair *)(void *)pairs.p)[i].score = p.score;
            if (p.a->len > maxlen) maxlen = p.a->len;
        }
        listpack = (long long)n <= s->tun.zset_max_listpack_entries &&
                   (long long)maxlen <= s->tun.zset_max_listpack_value;
    }
    size_t n = pairs.len / sizeof(pair);
    if (n == 0) {
        r->empty = !r->err;
        goto bad;
    }
    pair *v = (pair *)(void *)pairs.p;
    /* a listpack or ziplist keeps its pairs in order, and Redis reads them in place: one
     * out of order would be served out of order (ZRANGE) and break ZADD's insertions.
     * Redis's sanitizer does not look at the order; the fake, which keeps the set sorted
     * whatever its encoding, refuses it (docs/fake_redis.md, DUMP and RESTORE). */
    if (type == FRI_RDB_TYPE_ZSET_LISTPACK || type == FRI_RDB_TYPE_ZSET_ZIPLIST)
        for (size_t i = 1; i < n; i++)
            if (!zset_pair_before(&v[i - 1], &v[i])) goto bad;
    fri_zset *z = fri_zset_restore_new(listpack, &s->tun);
    if (!z) goto bad;
    for (size_t i = 0; i < n; i++) {
        if (fri_zset_restore_add(z, v[i].score, v[i].a->buf, v[i].a->len) != 1) {
            fri_zset_free(z);
            goto bad;
        }
    }
    free_pairs(&pairs);
    fri_obj *o = fri_obj_new(FRI_ZSET, z);
    if (!o) fri_zset_free(z);
    return o;
bad:
    free_pairs(&pairs);
    return NULL;
}

static int rd_raw_sid(reader *r, fri_sid *id)
{
    unsigned char raw[16];
    if (rd_bytes(r, raw, 16) < 0) return -1;
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) {
        id->ms = id->ms << 8 | raw[i];
        id->seq = id->seq << 8 | raw[8 + i];
    }
    return 0;
}

static int64_t rd_ms(reader *r)
{
    unsigned char raw[8];
    uint64_t v = 0;
    if (rd_bytes(r, raw, 8) < 0) return 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)raw[i] << (8 * i);
    return (int64_t)v;
}

/* One node's listpack into the stream: 0, or -1 when malformed. */
static int load_stream_node(fri_stream *st, fri_sid master, const fri_str *data, fri_sid *prev,
                            int *have_prev)
{
    lp_reader lr;
    long long count, deleted, nmaster, zero;
    if (lp_open(&lr, data) < 0 || lp_must_int(&lr, &count) < 0 ||
        lp_must_int(&lr, &deleted) < 0 || lp_must_int(&lr, &nmaster) < 0 || nmaster < 0 ||
        (uint64_t)nmaster > data->len)
        return -1;
    /* the master field names are copied: the elements' digits live in lp_elem */
    fri_str **names = fri_calloc((size_t)nmaster + 1, sizeof(*names));
    fri_arg *margs = fri_calloc((size_t)nmaster + 1, sizeof(*margs));
    fri_arg *fv = NULL;
    fri_str **vals = NULL;
    int rc = -1;
    if (!names || !margs) goto out;
    for (long long k = 0; k < nmaster; k++) {
        lp_elem e;
        if (lp_must(&lr, &e) < 0 || !(names[k] = fri_str_new(e.p, e.len))) goto out;
        margs[k] = (fri_arg){names[k]->buf, names[k]->len};
    }
    if (lp_must_int(&lr, &zero) < 0 || zero != 0) goto out;
    if (fri_stream_restore_node(st, master, (long)nmaster, margs, (uint32_t)data->len) < 0)
        goto out;
    long long entries = 0; /* live and deleted: exactly count + deleted, as Redis's
                              streamValidateListpackIntegrity walks them */
    for (;;) {
        lp_elem e;
        int got = lp_next(&lr, &e);
        if (got < 0) goto out;
        if (got == 0) break;
        entries++;
        long long flags, dms, dseq, nf, lpcount;
        if (!e.is_int) goto out;
        flags = e.v;
        if (flags & ~3LL || lp_must_int(&lr, &dms) < 0 || lp_must_int(&lr, &dseq) < 0) goto out;
        int same = (flags & FRI_STREAM_ENTRY_SAMEFIELDS) != 0;
        nf = nmaster;
        if (!same && (lp_must_int(&lr, &nf) < 0 || nf < 0 || (uint64_t)nf > data->len))
            goto out;
        fri_free(fv);
        fri_free(vals);
        fv = fri_calloc(2 * (size_t)nf + 1, sizeof(*fv));
        vals = fri_calloc(2 * (size_t)nf + 1, sizeof(*vals));
        if (!fv || !vals) goto out;
        int ok = 1;
        for (long long k = 0; k < nf && ok; k++) {
            if (same) {
                fv[2 * k] = margs[k];
            } else {
                ok = lp_must(&lr, &e) == 0 && (vals[2 * k] = fri_str_new(e.p, e.len));
                if (ok) fv[2 * k] = (fri_arg){vals[2 * k]->buf, vals[2 * k]->len};
            }
            ok = ok && lp_must(&lr, &e) == 0 && (vals[2 * k + 1] = fri_str_new(e.p, e.len));
            if (ok) fv[2 * k + 1] = (fri_arg){vals[2 * k + 1]->buf, vals[2 * k + 1]->len};
        }
        if (!ok || lp_must_int(&lr, &lpcount) < 0 ||
            lpcount != (same ? nf + 3 : 2 * nf + 4)) {
            for (long long k = 0; k < 2 * nf; k++) fri_str_free(vals[k]);
            goto out;
        }
        fri_sid id = {master.ms + (uint64_t)dms, master.seq + (uint64_t)dseq};
        int deleted_flag = (flags & FRI_STREAM_ENTRY_DELETED) != 0;
        /* live entries must come in id order for the fake's searches */
        if (!deleted_flag) {
            if (*have_prev && fri_sid_cmp(id, *prev) <= 0) ok = 0;
            *prev = id;
            *have_prev = 1;
        }
        if (ok && fri_stream_restore_entry(st, (int)flags, id, (long)nf, fv) < 0) ok = 0;
        for (long long k = 0; k < 2 * nf; k++) fri_str_free(vals[k]);
        if (!ok) goto out;
    }
    fri_stream_restore_node_end(st);
    if (fri_stream_restore_last_live(st) != (size_t)count || count < 0 || deleted < 0 ||
        entries != count + deleted)
        goto out;
    rc = 0;
out:
    if (names)
        for (long long k = 0; k < nmaster; k++) fri_str_free(names[k]);
    fri_free(names);
    fri_free(margs);
    fri_free(fv);
    fri_free(vals);
    return rc;
}

static fri_obj *load_stream(reader *r, int type)
{
    int v2 = type == FRI_RDB_TYPE_STREAM_LISTPACKS_2;
    fri_stream *st = fri_stream_new();
    if (!st) return NULL;
    uint64_t nodes = rd_count(r, 2);
    fri_sid prev = FRI_SID_MIN, last_master = FRI_SID_MIN;
    int have_prev = 0;
    uint64_t live = 0;
    for (uint64_t k = 0; k < nodes && !r->err; k++) {
        fri_str *key = rd_string(r);
        fri_str *data = key ? rd_string(r) : NULL;
        fri_sid master = FRI_SID_MIN;
        int ok = key && data && key->len == 16;
        if (ok) {
            for (int i = 0; i < 8; i++) {
                master.ms = master.ms << 8 | (unsigned char)key->buf[i];
                master.seq = master.seq << 8 | (unsigned char)key->buf[8 + i];
            }
            /* node keys in order, each once (raxTryInsert) */
            if (k > 0 && fri_sid_cmp(master, last_master) <= 0) ok = 0;
            last_master = master;
        }
        if (ok && load_stream_node(st, master, data, &prev, &have_prev) < 0) ok = 0;
        if (ok) live += fri_stream_restore_last_live(st);
        fri_str_free(key);
        fri_str_free(data);
        if (!ok) r->err = 1;
    }
    st->length = rd_len(r, NULL);
    st->last_id.ms = rd_len(r, NULL);
    st->last_id.seq = rd_len(r, NULL);
    if (v2) {
        st->first_id.ms = rd_len(r, NULL);
        st->first_id.seq = rd_len(r, NULL);
        st->max_deleted_entry_id.ms = rd_len(r, NULL);
        st->max_deleted_entry_id.seq = rd_len(r, NULL);
        st->entries_added = rd_len(r, NULL);
    } else {
        /* an older payload: no tombstone, every entry counted as added, and the first id
         * found as streamGetEdgeID finds it (max-max in a stream without entries) */
        st->entries_added = st->length;
        if (!fri_stream_first_valid_id(st, &st->first_id))
            st->first_id = (fri_sid){UINT64_MAX, UINT64_MAX};
    }
    /* the fake's stream needs its counters to agree with its entries */
    if (r->err || st->length != live || (have_prev && fri_sid_cmp(st->last_id, prev) < 0))
        goto bad;
    uint64_t ngroups = rd_count(r, 3);
    for (uint64_t g = 0; g < ngroups && !r->err; g++) {
        fri_str *name = rd_string(r);
        if (!name) goto bad;
        fri_sid last = {rd_len(r, NULL), 0};
        last.seq = rd_len(r, NULL);
        long long entries_read = v2 ? (long long)rd_len(r, NULL)
                                    : fri_stream_estimate_entries_read(st, last);
        int exists;
        fri_stream_cg *cg =
            r->err ? NULL : fri_stream_cg_restore(st, name->buf, name->len, last, entries_read,
                                                  &exists);
        fri_str_free(name);
        if (!cg) goto bad;
        uint64_t npel = rd_count(r, 17);
        for (uint64_t i = 0; i < npel && !r->err; i++) {
            fri_sid id;
            if (rd_raw_sid(r, &id) < 0) goto bad;
            int64_t when = rd_ms(r);
            uint64_t count = rd_len(r, NULL);
            if (r->err || fri_stream_pel_restore(cg, id, when, count) != 1) goto bad;
        }
        uint64_t ncons = rd_count(r, 10);
        for (uint64_t i = 0; i < ncons && !r->err; i++) {
            fri_str *cname = rd_string(r);
            if (!cname) goto bad;
            int64_t seen = rd_ms(r);
            fri_stream_consumer *cons =
                r->err ? NULL
                       : fri_stream_consumer_restore(cg, cname->buf, cname->len, seen, &exists);
            fri_str_free(cname);
            if (!cons) goto bad;
            uint64_t n = rd_count(r, 16);
            for (uint64_t j = 0; j < n && !r->err; j++) {
                fri_sid id;
                if (rd_raw_sid(r, &id) < 0 || fri_stream_consumer_pel_restore(cg, cons, id) != 1)
                    goto bad;
            }
        }
        /* A pending entry no consumer took: Redis refuses it only when it sanitizes the
         * payload, and crashes on it later otherwise; the fake always refuses it. */
        if (!r->err && !fri_stream_cg_restore_complete(cg)) goto bad;
    }
    if (r->err) goto bad;
    fri_obj *o = fri_obj_new(FRI_STREAM, st);
    if (!o) fri_stream_free(st);
    return o;
bad:
    fri_stream_free(st);
    return NULL;
}

static fri_obj *load(fr_server *s, reader *r);

fri_obj *fri_rdb_load(fr_server *s, const unsigned char *p, size_t len)
{
    reader r = {p, len, 0, 0, 0, 0, 0, NULL, 0};
    fri_obj *o = load(s, &r);
    /* Redis's lzf_decompress sets errno when it fails (the redis_errno mirror, fr_int.h) */
    if (r.lzf_errno) s->redis_errno = r.lzf_errno;
    return o;
}

static fri_obj *load(fr_server *s, reader *r)
{
    unsigned char type;
    if (rd_bytes(r, &type, 1) < 0) return NULL;
    return fri_rdb_read_value(s, r, type);
}

int fri_rdb_read_bytes(fri_rdb_reader *r, void *dst, size_t n) { return rd_bytes(r, dst, n); }
uint64_t fri_rdb_read_len(fri_rdb_reader *r) { return rd_len(r, NULL); }
fri_str *fri_rdb_read_string(fri_rdb_reader *r) { return rd_string(r); }

int fri_rdb_is_value_type(int type)
{
    return (type >= FRI_RDB_TYPE_STRING && type <= FRI_RDB_TYPE_ZSET_2) ||
           (type >= FRI_RDB_TYPE_LIST_ZIPLIST && type <= FRI_RDB_TYPE_STREAM_LISTPACKS_2);
}

fri_obj *fri_rdb_read_value(fr_server *s, fri_rdb_reader *r, int type)
{
    r->empty = 0;
    switch (type) {
    case FRI_RDB_TYPE_STRING: {
        fri_str *str = rd_string(r);
        if (!str) return NULL;
        fri_obj *o = fri_obj_new(FRI_STRING, str);
        if (!o) {
            fri_str_free(str);
            return NULL;
        }
        fri_str_created(o);
        fri_str_encode(s, o); /* tryObjectEncoding */
        return o;
    }
    case FRI_RDB_TYPE_LIST:
    case FRI_RDB_TYPE_LIST_ZIPLIST:
    case FRI_RDB_TYPE_LIST_QUICKLIST:
    case FRI_RDB_TYPE_LIST_QUICKLIST_2: return load_list(s, r, type);
    case FRI_RDB_TYPE_SET:
    case FRI_RDB_TYPE_SET_INTSET: return load_set(s, r, type);
    case FRI_RDB_TYPE_HASH:
    case FRI_RDB_TYPE_HASH_ZIPLIST:
    case FRI_RDB_TYPE_HASH_LISTPACK: return load_hash(s, r, type);
    case FRI_RDB_TYPE_ZSET:
    case FRI_RDB_TYPE_ZSET_2:
    case FRI_RDB_TYPE_ZSET_ZIPLIST:
    case FRI_RDB_TYPE_ZSET_LISTPACK: return load_zset(s, r, type);
    case FRI_RDB_TYPE_STREAM_LISTPACKS:
    case FRI_RDB_TYPE_STREAM_LISTPACKS_2: return load_stream(r, type);
    default: return NULL;
    }
}

/* ----- The commands -------------------------------------------------------------------------- */

void fri_rdb_set_lru_or_lfu(fr_server *s, fri_obj *o, long long lfu_freq, long long lru_idle,
                            int64_t now_ms, uint32_t lru_clock)
{
    if (s->tun.maxmemory_policy & FRI_MAXMEMORY_FLAG_LFU) {
        if (lfu_freq >= 0) {
            uint32_t minutes = (uint32_t)(((uint64_t)(now_ms < 0 ? 0 : now_ms) / 60000) & 65535);
            fri_obj_lru_set(s, o, minutes << 8 | (uint32_t)lfu_freq);
        }
    } else if (lru_idle >= 0) {
        long long lru_max = (1 << 24) - 1;
        long long abs = (long long)lru_clock - lru_idle;
        if (abs < 0) abs += lru_max;
        fri_obj_lru_set(s, o, (uint32_t)((uint64_t)abs & (uint64_t)lru_max)); /* 24 bits */
    }
}

/* DUMP key: the payload, or nil for a missing key. */
static void dump_command(fr_client *c)
{
    fri_obj *o = fri_lookup_read(c, &c->argv[1]);
    if (!o) {
        fri_reply_nil(c);
        return;
    }
    fri_buf b = {0};
    /* rdbSaveObject walks a stream's radix trees to their ends: raxNext sets errno = 0 */
    if (o->type == FRI_STREAM) c->srv->redis_errno = 0;
    if (fri_rdb_dump(c->srv, o, &b) < 0) {
        fri_buf_free(&b);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_bulk(c, b.p, b.len);
    fri_buf_free(&b);
}

/* RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f], in the order of Redis's
 * restoreCommand: the options (IDLETIME and FREQ exclude each other: the second is a
 * syntax error), the key (BUSYKEY without REPLACE), the TTL, the footer, the value.  A
 * TTL already past creates nothing (and with REPLACE still deletes the old value). */
static void restore_command(fr_client *c)
{
    long long ttl, lfu_freq = -1, lru_idle = -1;
    int replace = 0, absttl = 0;
    for (int j = 4; j < c->argc; j++) {
        int additional = c->argc - j - 1;
        if (fri_arg_is_cstr(&c->argv[j], "replace")) {
            replace = 1;
        } else if (fri_arg_is_cstr(&c->argv[j], "absttl")) {
            absttl = 1;
        } else if (fri_arg_is_cstr(&c->argv[j], "idletime") && additional >= 1 &&
                   lfu_freq == -1) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &lru_idle, NULL) < 0) return;
            if (lru_idle < 0) {
                fri_reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
            j++;
        } else if (fri_arg_is_cstr(&c->argv[j], "freq") && additional >= 1 && lru_idle == -1) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &lfu_freq, NULL) < 0) return;
            if (lfu_freq < 0 || lfu_freq > 255) {
                fri_reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
            j++;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    const fri_arg *key = &c->argv[1];
    if (!replace && fri_lookup_write(c, key)) {
        fri_reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    if (fri_get_ll_or_reply(c, &c->argv[2], &ttl, NULL) < 0) return;
    if (ttl < 0) {
        fri_reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    const unsigned char *payload = (const unsigned char *)c->argv[3].ptr;
    if (fri_rdb_verify(payload, c->argv[3].len) < 0) {
        fri_reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    fri_obj *o = fri_rdb_load(c->srv, payload, c->argv[3].len);
    if (!o) {
        fri_reply_error(c, "ERR Bad data format");
        return;
    }
    int deleted = replace ? fri_db_delete(c->db, key->ptr, key->len) : 0;
    if (ttl && !absttl) ttl = (long long)((uint64_t)ttl + (uint64_t)c->now_ms);
    if (ttl && ttl <= c->now_ms && !c->srv->loading) {
        if (deleted) {
            fri_signal_modified(c, c->db, key->ptr, key->len);
            fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
            fri_arg v[2] = {{"DEL", 3}, *key}; /* propagated as DEL */
            fri_propagate_rewrite(c, 2, v);
        }
        fri_obj_free(o);
        fri_reply_ok(c);
        return;
    }
    o->expire_ms = ttl ? ttl : -1;
    fri_db_add(c->db, key->ptr, key->len, o);
    /* a relative TTL is propagated absolute: RESTORE ... <ms> ... ABSTTL */
    if (ttl && !absttl && fri_propagating(c->srv)) {
        char ms[24];
        fri_arg *v = fri_malloc(sizeof(*v) * (size_t)(c->argc + 1));
        memcpy(v, c->argv, sizeof(*v) * (size_t)c->argc);
        v[2] = (fri_arg){ms, fri_ll2string(ms, sizeof(ms), ttl)};
        v[c->argc] = (fri_arg){"ABSTTL", 6};
        fri_propagate_rewrite(c, c->argc + 1, v);
        fri_free(v);
    }
    fri_rdb_set_lru_or_lfu(c->srv, o, lfu_freq, lru_idle, c->now_ms, c->srv->cmd_lru);
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_GENERIC, "restore", key);
    fri_reply_ok(c);
}

const fri_command fri_rdb_commands[] = {
    {"dump", dump_command, 2, FRI_CMD_READONLY, "generic", 1, 1, 1, NULL, NULL},
    {"restore", restore_command, -4, FRI_CMD_WRITE | FRI_CMD_DENYOOM, "generic", 1, 1, 1, NULL,
     NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};

/* DEBUG RELOAD: the keyspace and the libraries saved as an RDB file (rdb_file.c) and
 * loaded back, as redis-server's rdbSave, emptyData and rdbLoad do: expired keys are not
 * saved, values get the encodings loading gives them and a fresh LRU stamp (or the idle
 * time or counter the file keeps under an LRU or LFU policy), WATCHers are touched and the
 * key hook sees a flush.  No keyspace notification, no command counted.  0, or -1 when out
 * of memory (the keyspace is then as it was). */
static int server_reload_guarded(fr_server *s)
{
    fri_buf b = {0};
    fri_rdb_save_info info = {fr_clock_now(s) / 1000, 0, 0};
    fri_rdb_load_opts opts = {0, 0, 0, 0, 0};
    fri_rdb_load_result *res = fri_malloc(sizeof(*res));
    int rc = -1;
    if (res && fri_rdb_file_save(s, &b, &info) == 0)
        rc = fri_rdb_file_load(s, (const unsigned char *)b.p, b.len, &opts, res);
    fri_free(res);
    fri_buf_free(&b);
    return rc;
}

int fr_server_reload(fr_server *s)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_reload");
    int r = server_reload_guarded(s);
    fri_mem_leave(guard);
    return r;
}
