import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

import weka.classifiers.bayes.NaiveBayes;
import weka.core.Instance;
import weka.core.Instances;
import weka.core.Utils;

/**
 * Runs WEKA's weka.classifiers.bayes.NaiveBayes (default options) on many train/test pairs in one JVM.
 *
 * Usage: java -cp weka.jar:DIR NBDump JOBS
 * JOBS has one tab-separated line per split: classIndex (0-based) TAB train.arff TAB test.arff TAB out.txt.
 * Each out.txt starts with "OK <options>" (or "ERROR <message>"), then one line per test instance:
 * actual class index (-1 if missing), classifyInstance's index (-1 if missing), and
 * distributionForInstance's K values, all written with Double.toString (shortest exact decimal).
 */
public class NBDump {
    static Instances load(String path, int classIndex) throws Exception {
        BufferedReader reader = new BufferedReader(
            new InputStreamReader(new FileInputStream(path), StandardCharsets.UTF_8));
        try {
            Instances data = new Instances(reader);
            data.setClassIndex(classIndex);
            return data;
        } finally {
            reader.close();
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader jobs = new BufferedReader(
            new InputStreamReader(new FileInputStream(args[0]), StandardCharsets.UTF_8));
        String line;
        int done = 0;
        while ((line = jobs.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t");
            int classIndex = Integer.parseInt(f[0]);
            PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(f[3]), StandardCharsets.UTF_8)));
            try {
                Instances train = load(f[1], classIndex);
                Instances test = load(f[2], classIndex);
                if (!train.equalHeaders(test)) throw new Exception("train and test headers differ");
                NaiveBayes nb = new NaiveBayes();
                nb.buildClassifier(train);
                out.println("OK " + Utils.joinOptions(nb.getOptions()));
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < test.numInstances(); i++) {
                    Instance inst = test.instance(i);
                    double[] dist = nb.distributionForInstance(inst);
                    double pred = nb.classifyInstance(inst);
                    sb.setLength(0);
                    sb.append(inst.classIsMissing() ? -1 : (int) inst.classValue());
                    sb.append(' ').append(Instance.isMissingValue(pred) ? -1 : (int) pred);
                    for (double p : dist) sb.append(' ').append(Double.toString(p));
                    out.println(sb);
                }
            } catch (Exception e) {
                out.println("ERROR " + e.toString().replace('\n', ' '));
            } finally {
                out.close();
            }
            done++;
        }
        jobs.close();
        System.err.println("NBDump: " + done + " splits done");
    }
}
