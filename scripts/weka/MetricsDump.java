import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;

import weka.classifiers.Evaluation;
import weka.core.Attribute;
import weka.core.FastVector;
import weka.core.Instance;
import weka.core.Instances;

/**
 * WEKA 3.6's Evaluation of given class distributions (no classifier): for each case, an Instances header with
 * one nominal class attribute of K values, and evaluateModelOnceAndRecordPrediction(dist, instance) per test
 * instance (weight w, true class y). Prints, per case, full-precision values of errorRate, kappa,
 * meanAbsoluteError, rootMeanSquaredError, the per-class rates and ROC areas, the weighted averages and the
 * confusion matrix, one "key value..." line each, between "BEGIN name" and "END".
 *
 * Usage: java -cp weka.jar:DIR MetricsDump CASES
 * CASES: "CASE name K" then one line "w y p_0 ... p_{K-1}" per instance, then "END".
 */
public class MetricsDump {
    static String fmt(double v) {
        return Double.isNaN(v) ? "nan" : Double.toString(v);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(
            new InputStreamReader(new FileInputStream(args[0]), StandardCharsets.UTF_8));
        String line;
        String name = null;
        int K = 0;
        ArrayList<double[]> rows = new ArrayList<double[]>();
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) continue;
            String[] f = line.split("\\s+");
            if (f[0].equals("CASE")) {
                name = f[1];
                K = Integer.parseInt(f[2]);
                rows.clear();
            } else if (f[0].equals("END")) {
                run(name, K, rows);
            } else {
                double[] r = new double[f.length];
                for (int i = 0; i < f.length; i++) r[i] = Double.parseDouble(f[i]);
                rows.add(r);
            }
        }
        in.close();
    }

    static void run(String name, int K, ArrayList<double[]> rows) throws Exception {
        FastVector values = new FastVector(K);
        for (int k = 0; k < K; k++) values.addElement("c" + k);
        FastVector attrs = new FastVector(1);
        attrs.addElement(new Attribute("class", values));
        Instances header = new Instances(name, attrs, rows.size());
        header.setClassIndex(0);
        Evaluation eval = new Evaluation(header);
        for (double[] r : rows) {
            Instance inst = new Instance(1);
            inst.setDataset(header);
            inst.setValue(0, r[1]);
            inst.setWeight(r[0]);
            double[] dist = new double[K];
            for (int k = 0; k < K; k++) dist[k] = r[2 + k];
            eval.evaluateModelOnceAndRecordPrediction(dist, inst);
        }
        System.out.println("BEGIN " + name);
        System.out.println("error " + fmt(eval.errorRate()));
        System.out.println("kappa " + fmt(eval.kappa()));
        System.out.println("mae " + fmt(eval.meanAbsoluteError()));
        System.out.println("rmse " + fmt(eval.rootMeanSquaredError()));
        StringBuilder tp = new StringBuilder("tp_rate"), fp = new StringBuilder("fp_rate"),
            pr = new StringBuilder("precision"), re = new StringBuilder("recall"), f1 = new StringBuilder("f1"),
            roc = new StringBuilder("roc_auc");
        for (int k = 0; k < K; k++) {
            tp.append(" ").append(fmt(eval.truePositiveRate(k)));
            fp.append(" ").append(fmt(eval.falsePositiveRate(k)));
            pr.append(" ").append(fmt(eval.precision(k)));
            re.append(" ").append(fmt(eval.recall(k)));
            f1.append(" ").append(fmt(eval.fMeasure(k)));
            roc.append(" ").append(fmt(eval.areaUnderROC(k)));
        }
        System.out.println(tp);
        System.out.println(fp);
        System.out.println(pr);
        System.out.println(re);
        System.out.println(f1);
        System.out.println(roc);
        System.out.println("weighted_precision " + fmt(eval.weightedPrecision()));
        System.out.println("weighted_recall " + fmt(eval.weightedRecall()));
        System.out.println("weighted_f1 " + fmt(eval.weightedFMeasure()));
        System.out.println("weighted_roc_auc " + fmt(eval.weightedAreaUnderROC()));
        double[][] cm = eval.confusionMatrix();
        for (int i = 0; i < K; i++) {
            StringBuilder row = new StringBuilder("cm");
            for (int j = 0; j < K; j++) row.append(" ").append(fmt(cm[i][j]));
            System.out.println(row);
        }
        System.out.println("END");
    }
}
