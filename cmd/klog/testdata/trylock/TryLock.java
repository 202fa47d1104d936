// TryLock probes a Kafka log directory's .lock the way a broker does at
// start (LogManager.lockLogDirs: org.apache.kafka.server.util.FileLock,
// which opens the file with CREATE, READ, WRITE and calls
// FileChannel.tryLock). Run with the source launcher:
//
//	java TryLock.java LOGDIR/.lock
//
// For each line read from stdin it probes once and prints "held" (tryLock
// returned null, or OverlappingFileLockException) or "free" (it got the lock,
// which it releases before it answers). klog's lock test (cmd/klog/lock_test.go) drives
// it beside a running klog serve --writable.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

public class TryLock {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while (in.readLine() != null) {
            try (FileChannel ch = FileChannel.open(Paths.get(args[0]),
                    StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                FileLock lock;
                try {
                    lock = ch.tryLock();
                } catch (OverlappingFileLockException e) {
                    lock = null;
                }
                boolean held = lock == null;
                if (lock != null) {
                    lock.release();
                }
                ch.close();
                // Answered after the release: the test asks the other
                // prober as soon as it reads this line.
                System.out.println(held ? "held" : "free");
            }
            System.out.flush();
        }
    }
}
