package testsuites








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









	// 330









	// 340









	// 350









	// 360









	// 370









	// 380









	// 390









	// 400









	// 410









	// 420









	// 430









	// 440









	// 450









	// 460









	// 470






		// TODO: https://github.com/kubernetes/kubernetes/issues/113359
		if framework.NodeOSDistroIs("windows") {
			e2eskipper.Skipf("Test is not valid Windows - skipping")
		}



	// 480









	// 490









	// 500









	// 510









	// 520









	// 530









	// 540









	// 550









	// 560









	// 570









	// 580









	// 590









	// 600









	// 610









	// 620









	// 630









	// 640









	// 650









	// 660









	// 670









	// 680









	// 690









	// 700









	// 710









	// 720









	// 730









	// 740









	// 750









	// 760









	// 770









	// 780









	// 790









	// 800









	// 810









	// 820









	// 830









	// 840









	// 850









	// 860









	// 870









	// 880









	// 890









	// 900









	// 910









	// 920









	// 930









	// 940









	// 950









	// 960









	// 970









	// 980









	// 990









	// 1000









	// 1010









	// 1020









	// 1030









	// 1040









	// 1050









	// 1060









	// 1070









	// 1080









	// 1090









	// 1100









	// 1110









	// 1120









	// 1130









	// 1140









	// 1150









	// 1160









	// 1170









	// 1180









	// 1190









	// 1200









	// 1210









	// 1220









	// 1230









	// 1240









	// 1250









	// 1260









	// 1270









	// 1280









	// 1290









	// 1300









	// 1310









	// 1320









	// 1330









	// 1340









	// 1350









	// 1360









	// 1370









	// 1380









	// 1390









func getVolumeIDFromMountPath(ctx context.Context, f *framework.Framework, pod *v1.Pod, mountPath string) (string, error) {


	out, err := e2epod.ExecPowerShell(ctx, f, pod, fmt.Sprintf("(Get-Item -Path \"%s\").Target", mountPath))






	// 1410

	if volumeID == "" {
		return "", fmt.Errorf("resolved empty volumeID for mountPath %q", mountPath)
	}


}


	// 1420






