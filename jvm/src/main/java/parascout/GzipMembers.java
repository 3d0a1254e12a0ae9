package parascout;

import java.io.IOException;
import java.io.InputStream;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * The decompressed bytes of concatenated gzip members. Unlike java.util.zip.GZIPInputStream, which ignores
 * whatever follows a member when it is not another header, every byte must belong to a member: a stream that
 * ends inside a member throws {@code truncated_gzip}, a bad header, deflate data or CRC throws {@code bad_gzip}
 * (as zlib does for udfs/index/cdx.py's {@code gunzip_members}).
 */
final class GzipMembers extends InputStream {
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;
    private static final int FHCRC = 2;

    private final InputStream raw;
    private final byte[] buffer = new byte[1 << 16];
    private int position;
    private int limit;
    private final Inflater inflater = new Inflater(true);
    private final CRC32 crc = new CRC32();
    private boolean inMember;
    private boolean done;

    GzipMembers(InputStream raw) {
        this.raw = raw;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] out, int offset, int length) throws IOException {
        while (!done) {
            if (!inMember) {
                int first = rawByte();
                if (first < 0) {
                    done = true;
                    break;
                }
                header(first);
            }
            int made;
            try {
                made = inflater.inflate(out, offset, length);
            } catch (DataFormatException error) {
                throw new CdxFileReader.Broken("bad_gzip");
            }
            if (made > 0) {
                crc.update(out, offset, made);
                return made;
            }
            if (inflater.finished()) {
                position = limit - inflater.getRemaining();
                trailer();
            } else if (inflater.needsDictionary()) {
                throw new CdxFileReader.Broken("bad_gzip");
            } else if (inflater.needsInput()) {
                if (!fill()) {
                    throw new CdxFileReader.Broken("truncated_gzip");
                }
                inflater.setInput(buffer, 0, limit);
                position = limit;
            }
        }
        return -1;
    }

    @Override
    public void close() throws IOException {
        inflater.end();
        raw.close();
    }

    private void header(int first) throws IOException {
        if (first != 0x1f || required() != 0x8b || required() != 8) {
            throw new CdxFileReader.Broken("bad_gzip");
        }
        int flags = required();
        skip(6);  // mtime, extra flags, OS
        if ((flags & FEXTRA) != 0) {
            skip(required() | required() << 8);
        }
        if ((flags & FNAME) != 0) {
            skipZeroTerminated();
        }
        if ((flags & FCOMMENT) != 0) {
            skipZeroTerminated();
        }
        if ((flags & FHCRC) != 0) {
            skip(2);
        }
        inflater.reset();
        crc.reset();
        inflater.setInput(buffer, position, limit - position);
        position = limit;
        inMember = true;
    }

    private void trailer() throws IOException {
        long expected = 0;
        for (int i = 0; i < 4; i++) {
            expected |= (long) required() << (8 * i);
        }
        skip(4);  // ISIZE: the CRC already vouches for the data
        if (expected != crc.getValue()) {
            throw new CdxFileReader.Broken("bad_gzip");
        }
        inMember = false;
    }

    private void skip(int count) throws IOException {
        for (int i = 0; i < count; i++) {
            required();
        }
    }

    private void skipZeroTerminated() throws IOException {
        while (required() != 0) {
            // the file name or comment, unused
        }
    }

    private int required() throws IOException {
        int value = rawByte();
        if (value < 0) {
            throw new CdxFileReader.Broken("truncated_gzip");
        }
        return value;
    }

    private int rawByte() throws IOException {
        if (position == limit && !fill()) {
            return -1;
        }
        return buffer[position++] & 0xff;
    }

    private boolean fill() throws IOException {
        int read = raw.read(buffer, 0, buffer.length);
        position = 0;
        limit = Math.max(read, 0);
        return read > 0;
    }
}
