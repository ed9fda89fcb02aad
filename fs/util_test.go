package fs

import "os/exec"

func haveTool(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}
