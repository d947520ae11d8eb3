/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0.
*/

package framework

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// TestServerSetup holds the hooks a test can use to adjust the server.
type TestServerSetup struct {
	ModifyServerRunOptions func(opts *ServerRunOptions)
	ModifyServerConfig     func(cfg *ServerConfig)
}

// ServerRunOptions are the flags the test apiserver starts with.
type ServerRunOptions struct {
	BindAddress string
	Port        int
	Verbose     bool
}

// ServerConfig is the resolved configuration of a running test apiserver.
type ServerConfig struct {
	Address string
	Client  *rest.Config
}

// StartTestServer starts an apiserver for an integration test and waits until it
// answers /healthz.
func StartTestServer(ctx context.Context, t testing.TB, setup TestServerSetup) (*ServerConfig, func()) {
	opts := &ServerRunOptions{BindAddress: "127.0.0.1", Port: 0}
	if setup.ModifyServerRunOptions != nil {
		setup.ModifyServerRunOptions(opts)
	}
	cfg, stop, err := runServer(ctx, opts)
	if err != nil {
		t.Fatalf("failed to start the test server: %v", err)
	}
	if setup.ModifyServerConfig != nil {
		setup.ModifyServerConfig(cfg)
	}
	healthz := fmt.Sprintf("http://%s/healthz", cfg.Address)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		resp, err := http.Get(healthz)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		stop()
		t.Fatalf("the test server did not become healthy: %v", err)
	}
	return cfg, stop
}

func runServer(ctx context.Context, opts *ServerRunOptions) (*ServerConfig, func(), error) {
	if opts.Port < 0 {
		return nil, nil, fmt.Errorf("invalid port %d", opts.Port)
	}
	addr := fmt.Sprintf("%s:%d", opts.BindAddress, opts.Port)
	srv := &http.Server{Addr: addr}
	go func() {
		_ = srv.ListenAndServe()
	}()
	stop := func() {
		_ = srv.Shutdown(context.Background())
	}
	return &ServerConfig{Address: addr, Client: &rest.Config{Host: addr}}, stop, nil
}
