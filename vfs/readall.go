package vfs

import "os"

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

// OpenStat opens name on fs with flag (an existing file: nothing is
// created) and returns it with what its Stat says. When Stat fails the
// file is closed again and its error returned.
func OpenStat(fs FS, name string, flag int) (File, os.FileInfo, error) {
	f, err := fs.OpenFile(name, flag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
