module recallref

go 1.21
