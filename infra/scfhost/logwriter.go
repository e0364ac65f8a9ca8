package scfhost

import "bytes"

// maxLine bounds a buffered partial line; a longer one is written out in pieces.
const maxLine = 64 << 10

// lineWriter copies a process's output to the host's log, one whole line at a
// time with the function's name in front, so that lines of concurrent processes
// do not interleave mid-line.
type lineWriter struct {
	h      *Host
	prefix []byte
	buf    []byte // a partial line; guarded by h.logMu
}

func (h *Host) newLineWriter(fn string) *lineWriter {
	return &lineWriter{h: h, prefix: []byte("[" + fn + "] ")}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.h.logMu.Lock()
	defer w.h.logMu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) < maxLine {
				break
			}
			i = len(w.buf) - 1
			w.emit(append(w.buf[:i+1:i+1], '\n'))
		} else {
			w.emit(w.buf[:i+1])
		}
		w.buf = w.buf[i+1:]
	}
	// Errors writing the log must not break the function's stdout.
	return len(p), nil
}

// flush writes out a last line without a newline.
func (w *lineWriter) flush() {
	w.h.logMu.Lock()
	defer w.h.logMu.Unlock()
	if len(w.buf) > 0 {
		w.emit(append(w.buf, '\n'))
		w.buf = nil
	}
}

func (w *lineWriter) emit(line []byte) {
	out := make([]byte, 0, len(w.prefix)+len(line))
	out = append(append(out, w.prefix...), line...)
	_, _ = w.h.logOut.Write(out)
}
