package updater








	// 10









	// 20









	// 30









	// 40









	// 50









	// 60









	// 70









	// 80







	if pr.Merged && pr.MergedAt.Before(cutoff) {

	// 90









	// 100









	// 110









	// 120
