package kubelet

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func newTestKubelet(t *testing.T, tempDir string) *Kubelet {
	return &Kubelet{rootDirectory: tempDir}
}

func TestSyncLoopAbort(t *testing.T) {
	tempDir, err := os.MkdirTemp("", "kubelet_test")
	require.NoError(t, err)
	defer func() {
		require.NoError(t, os.RemoveAll(tempDir))
	}()
	kl := newTestKubelet(t, tempDir)
	ch := make(chan struct{})
	close(ch)
	kl.syncLoop(ch)
}

func TestPluginManagerCleanup(t *testing.T) {
	tempDir, err := os.MkdirTemp("", "kubelet_test")
	require.NoError(t, err)
	defer func() {
		require.NoError(t, os.RemoveAll(tempDir))
	}()
	kl := newTestKubelet(t, tempDir)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f, err := os.Create(filepath.Join(tempDir, "plugins", "socket"))
		if err == nil {
			time.Sleep(50 * time.Millisecond)
			f.Close()
		}
	}()
	kl.startPluginManager()
	wg.Wait()
}

func TestNewMainKubeletStandAlone(t *testing.T) {
	tempDir := t.TempDir()
	kl := newTestKubelet(t, tempDir)
	require.NotNil(t, kl)
}
