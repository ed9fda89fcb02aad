package vfs

// ReadAll reads f whole through ReadAt, as many bytes as its Stat says.
// Where fewer can be read it returns those with the error that stopped it.
func ReadAll(f File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, fi.Size())
	n, err := f.ReadAt(buf, 0)
	if n == len(buf) {
		return buf, nil
	}
	return buf[:n], err
}

// ReadFile opens name on fs and reads it whole (ReadAll).
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f)
}
