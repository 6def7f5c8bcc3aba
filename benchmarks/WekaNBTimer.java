import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import weka.classifiers.Evaluation;
import weka.classifiers.bayes.NaiveBayes;
import weka.core.Instances;

/**
 * Times WEKA's weka.classifiers.bayes.NaiveBayes (default options) on many train/test pairs in one JVM,
 * for benchmarks/main_job.py.
 *
 * Compiled together with scripts/weka/NBDump.java, whose load() reads a file as the parity references do.
 * Usage: java -cp weka.jar:DIR WekaNBTimer JOBS
 * JOBS has one tab-separated line per split: classIndex (0-based) TAB train.arff TAB test.arff.
 * Per split: the two files are read (Instances from a reader), NaiveBayes is built on the training part
 * and weka.classifiers.Evaluation.evaluateModel scores the test part (what "-t train -T test" does).
 * Prints one line: "splits N load_s L build_s B evaluate_s E errors R", the seconds summed over the
 * splits (System.nanoTime), R the total test errors.
 */
public class WekaNBTimer {
    public static void main(String[] args) throws Exception {
        BufferedReader jobs = new BufferedReader(
            new InputStreamReader(new FileInputStream(args[0]), StandardCharsets.UTF_8));
        long load = 0, build = 0, evaluate = 0;
        double errors = 0;
        int done = 0;
        String line;
        while ((line = jobs.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t");
            int classIndex = Integer.parseInt(f[0]);
            long t0 = System.nanoTime();
            Instances train = NBDump.load(f[1], classIndex);
            Instances test = NBDump.load(f[2], classIndex);
            long t1 = System.nanoTime();
            NaiveBayes nb = new NaiveBayes();
            nb.buildClassifier(train);
            long t2 = System.nanoTime();
            Evaluation eval = new Evaluation(train);
            eval.evaluateModel(nb, test);
            long t3 = System.nanoTime();
            load += t1 - t0;
            build += t2 - t1;
            evaluate += t3 - t2;
            errors += eval.incorrect();
            done++;
        }
        jobs.close();
        System.out.println("splits " + done + " load_s " + (load / 1e9) + " build_s " + (build / 1e9)
                           + " evaluate_s " + (evaluate / 1e9) + " errors " + (long) errors);
    }
}
