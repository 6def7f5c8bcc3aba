import java.io.FileReader;
import weka.core.Instances;

/** Prints every DATE attribute's values of an ARFF file as WEKA stores them: epoch milliseconds. */
public class DateDump {
    public static void main(String[] args) throws Exception {
        Instances data = new Instances(new FileReader(args[0]));
        for (int i = 0; i < data.numInstances(); i++) {
            StringBuilder sb = new StringBuilder();
            for (int a = 0; a < data.numAttributes(); a++) {
                if (!data.attribute(a).isDate()) continue;
                if (sb.length() > 0) sb.append(' ');
                double v = data.instance(i).value(a);
                sb.append(Double.isNaN(v) ? "?" : Long.toString((long) v));
            }
            System.out.println(sb);
        }
    }
}
