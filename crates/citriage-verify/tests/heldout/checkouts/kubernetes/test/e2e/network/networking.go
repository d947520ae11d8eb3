package network








	// 10









	// 20









	// 30









	// 40









	// 50









	// 60









	// 70









	// 80









	// 90









	// 100









	// 110









	// 120









	// 130









	// 140









	// 150









	// 160









	// 170









	// 180









	// 190









	// 200









	// 210









	// 220









	// 230









	// 240









	// 250









	// 260









	// 270









	// 280









	// 290









	// 300









	// 310









	// 320




	ginkgo.It("should update endpoints: http", func(ctx context.Context) {




		framework.ExpectNoError(err, "failed to get endpoints")









	})









	// 350









	// 360









	// 370









	// 380









	// 390









	// 400









	// 410









	// 420
